"""Big and many values: ``onnx-studio run`` against a bare onnxruntime script, whole processes.

    python tests/benchmarks/bench_values.py [--rows big,save,intermediates] [--repeat 2]
                                            [--llama PATH] [--gb 1.0]
    python tests/benchmarks/bench_values.py --crossover   # where shared files beat the pipe

Rows (issue 19's table):

- ``big``: ``run --random`` of a model with one 1 GB output (an Expand of a [1, 1024] input
  to [N, 1024] floats, built here with onnx.helper);
- ``save``: the same with ``--save DIR``;
- ``intermediates``: ``run --random --all-intermediates`` of ``llama_200x128`` (11,812
  nodes; made by ``../shared/corpus/make_large_models.py``); without ``--llama`` the
  largest model found is used and the row says which.

Each side is a whole process (``python -c`` for the bare script, the ``onnx-studio`` CLI for
ours), timed by wall clock, with its peak resident memory from ``wait4`` (the largest
process of its tree: for ONNX Studio the bigger of the CLI and its run worker). The bare
script is what a user would write: create a session, run, print min/max/mean/std of every
value with numpy, and ``np.save`` each where asked. Best of ``--repeat`` runs, sides
interleaved. Targets: 1 GB output (and with --save) <= 1.5x time and peak memory;
intermediates <= 1.5x time, <= 1.3x memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable

BARE = r"""
import sys, time
import numpy as np, onnx, onnxruntime as ort
from onnx import helper
path, save, everything = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
model = onnx.load(path)
if everything:  # every node output becomes a graph output, as a user script would do it
    have = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for out in node.output:
            if out and out not in have:
                model.graph.output.append(helper.make_empty_tensor_value_info(out))
                have.add(out)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
else:
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(0)
types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
feeds = {}
for i in sess.get_inputs():
    shape = [d if isinstance(d, int) else 1 for d in i.shape]
    dt = types[i.type]
    feeds[i.name] = rng.random(shape).astype(dt) if dt == np.float32 else rng.integers(0, 2, shape).astype(dt)
names = [o.name for o in sess.get_outputs()]
values = sess.run(names, feeds)
for n, v in zip(names, values):
    if v.dtype.kind in "fiu" and v.size:
        print(n, v.dtype, v.shape, v.min(), v.max(), v.mean(), v.std())
    else:
        print(n, v.dtype, v.shape)
    if save != "-":
        np.save(f"{save}/{len(n)}_{abs(hash(n))}.npy", v)
"""


def make_big_model(path: Path, gb: float) -> int:
    """x[1, 1024] -> Expand -> y[N, 1024] float32 of ``gb`` GB (output shape declared)."""
    cols = 1024
    rows = int(gb * (1 << 30)) // (4 * cols)
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [rows, cols])
    g = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"])], "big_output",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cols])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])], initializer=[shape])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    return rows * cols * 4


def whole_process(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes of the tree's largest process, exit code)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err[-2000:]}")
    return seconds, usage.ru_maxrss * 1024, proc.returncode


def studio_cmd(model: Path, save: Path | None, everything: bool) -> list[str]:
    cmd = [PY, "-m", "editor.cli", "run", str(model), "--random", "--memory-limit", "none"]
    if save is not None:
        cmd += ["--save", str(save)]
    if everything:
        cmd.append("--all-intermediates")
    return cmd


def bare_cmd(model: Path, save: Path | None, everything: bool) -> list[str]:
    return [PY, "-c", BARE, str(model), str(save) if save else "-", "1" if everything else "0"]


def row(label: str, model: Path, *, save: bool, everything: bool, repeat: int, tmp: Path) -> dict:
    best: dict[str, tuple[float, int]] = {}
    for _ in range(repeat):
        for side, make in (("bare", bare_cmd), ("studio", studio_cmd)):
            out = tmp / f"save-{side}" if save else None
            if out is not None:
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
            seconds, rss, _ = whole_process(make(model, out, everything))
            old = best.get(side)
            best[side] = (min(seconds, old[0]) if old else seconds, min(rss, old[1]) if old else rss)
            if out is not None:
                shutil.rmtree(out, ignore_errors=True)
    (bt, bm), (st, sm) = best["bare"], best["studio"]
    print(f"| {label} | {st:.2f} s, {sm / 1e9:.2f} GB | {bt:.2f} s, {bm / 1e9:.2f} GB | "
          f"{st / bt:.2f}x time, {sm / bm:.2f}x memory |", flush=True)
    return {"label": label, "studio": best["studio"], "bare": best["bare"]}


def largest_model() -> Path | None:
    roots = [ROOT.parent / "shared" / "corpus", Path("/tmp/onnx-corpus-extra")]
    found = [p for r in roots if r.is_dir() for p in r.rglob("*.onnx")]
    return max(found, key=lambda p: p.stat().st_size) if found else None


CROSSOVER = r"""
import os, sys, time
import numpy as np, onnx
from onnx import TensorProto, helper
from editor.runtime import Runner
if __name__ == "__main__":
    size, count, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cols = 256
    rows = max(1, size // (4 * cols))
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [rows, cols])
    nodes = [helper.make_node("Expand", ["x", "shape"], [f"y{i}"]) for i in range(count)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cols])],
                          [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [rows, cols]) for i in range(count)],
                          initializer=[shape])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = np.ones((1, cols), np.float32)
    with Runner() as r:
        r.run(model, {"x": x})
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            res = r.run(model, {"x": x})
            for rec in res.outputs.values():
                float(rec.value.reshape(-1)[::1024].sum())  # touch it, as a reader would
            best = min(best, (time.perf_counter() - t) - res.run_seconds)
            del res
        print(best)
"""


def crossover(reps: int) -> None:
    """Per-value cost of the pipe against a shared file, by size (the run itself excluded)."""
    print("| value size | values | pipe, ms per value | shared file, ms per value |\n|---|---|---|---|")
    for size in (64 << 10, 256 << 10, 512 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20):
        count = max(2, min(64, (64 << 20) // size))
        cost = {}
        for how, threshold in (("pipe", 1 << 62), ("file", 0)):
            env = dict(os.environ, PYTHONPATH=str(ROOT), ONNX_STUDIO_SPILL_MIN_BYTES=str(threshold))
            out = subprocess.run([PY, "-c", CROSSOVER, str(size), str(count), str(reps)], env=env, capture_output=True,
                                 text=True, check=True)
            cost[how] = float(out.stdout.split()[-1]) / count * 1e3
        print(f"| {size >> 10} KiB | {count} | {cost['pipe']:.3f} | {cost['file']:.3f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="big,save,intermediates")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--gb", type=float, default=1.0, help="size of the big output")
    ap.add_argument("--llama", type=Path, help="llama_200x128/model.onnx (make_large_models.py)")
    ap.add_argument("--crossover", action="store_true", help="only: the pipe against shared files, by value size")
    args = ap.parse_args()
    if args.crossover:
        crossover(max(3, args.repeat))
        return
    rows = args.rows.split(",")
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}; peak RSS = the largest process of each tree")
    print("| work | ONNX Studio | bare onnxruntime | ratio |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        if "big" in rows or "save" in rows:
            big = tmp / "big.onnx"
            nbytes = make_big_model(big, args.gb)
            what = f"{nbytes / 1e9:.2f} GB output (Expand)"
            if "big" in rows:
                row(f"`run --random`, {what}", big, save=False, everything=False, repeat=args.repeat, tmp=tmp)
            if "save" in rows:
                row(f"`run --random --save DIR`, {what}", big, save=True, everything=False, repeat=args.repeat, tmp=tmp)
        if "intermediates" in rows:
            model = args.llama if args.llama and args.llama.is_file() else None
            label = "llama_200x128"
            if model is None:
                model = largest_model()
                label = f"{model.name} (llama_200x128 not given: --llama PATH)" if model else ""
            if model is None:
                print("| all intermediates | no model found | | |")
            else:
                n = len(onnx.load(str(model), load_external_data=False).graph.node)
                row(f"`run --random --all-intermediates`, {label} ({n:,} nodes)", model, save=False, everything=True,
                    repeat=args.repeat, tmp=tmp)


if __name__ == "__main__":
    main()
