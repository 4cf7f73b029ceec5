#!/usr/bin/env python3
"""Benchmark of editor.io: open time and peak memory against onnx.load and onnx_ir.load, save
time against onnx.save, on the same files in the same run.

    python tests/benchmarks/bench_io.py [--large-dir /tmp/onnx-large] [--repeat 3] [--json out.json]

Models: the corpus' largest real model, plus every ``<large-dir>/<name>/model.onnx`` made by
``shared/corpus/make_large_models.py`` (e.g. ``llama_200x128``: 11,812 nodes, and
``llama_big_2048``: ~2.9 GB of external data).

Each open runs in a fresh subprocess (so peak RSS belongs to one approach alone); the figure
reported is the best of ``--repeat`` runs. "rss+" is resident memory after the open minus
the baseline after imports; "peak+" the same for the peak (ru_maxrss). Issue targets checked:
a >2 GB model opens in < 0.1 s with < 150 MB resident; the 11,812-node model opens in
<= 1.25x onnx_ir.load's time; unchanged saves are byte-identical and take <= 1.2x onnx.save.
Not collected by pytest (tests/benchmarks is ignored by the default run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# ----------------------------------------------------------------------------- children


def child_open(approach: str, path: str) -> dict:
    import onnx
    import onnx_ir

    from editor.io import load_model

    base_rss, base_peak = _rss_kb(), _peak_kb()
    t0 = time.perf_counter()
    if approach == "studio":
        obj = load_model(path)
    elif approach == "onnx":
        obj = onnx.load(path)  # the default: external data read into memory
    elif approach == "onnx-noext":
        obj = onnx.load(path, load_external_data=False)
    elif approach == "onnx_ir":
        obj = onnx_ir.load(path)
    else:
        raise SystemExit(f"unknown approach {approach}")
    seconds = time.perf_counter() - t0
    out = {
        "approach": approach,
        "seconds": seconds,
        "rss_mb": _rss_kb() / 1024,
        "rss_delta_mb": (_rss_kb() - base_rss) / 1024,
        "peak_delta_mb": (_peak_kb() - base_peak) / 1024,
        "baseline_mb": base_rss / 1024,
    }
    del obj
    return out


def child_save(path: str, repeat: int) -> dict:
    """Unchanged save: ours (preserve, atomic + fsync) vs onnx.save, same folder as the model.

    onnx.save neither fsyncs nor renames, so two more references are timed: onnx.save followed
    by an fsync of the file (the same durability as ours), and ours with fsync switched off
    (what our own logic costs: the tensor walk, the temporary file and the rename).
    """
    import onnx

    import editor.io.atomic as atomic
    from editor.io import load_model, save_model

    src = Path(path)
    loaded = load_model(src)
    plain = onnx.load(path, load_external_data=False)
    original = src.read_bytes()
    from editor.document import Document

    doc = Document.open(src)  # the app's path: an unchanged document re-writes its file's bytes
    times: dict[str, list[float]] = {"ours": [], "onnx": [], "onnx_fsync": [], "ours_nofsync": [], "document": []}
    ours_out = src.with_name(".bench_ours.onnx")
    onnx_out = src.with_name(".bench_onnx.onnx")
    doc_out = src.with_name(".bench_doc.onnx")
    real_fsync = atomic._fsync

    def onnx_fsync() -> None:
        onnx.save(plain, os.fspath(onnx_out))
        fd = os.open(onnx_out, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)

    def ours_nofsync() -> None:
        atomic._fsync = lambda fd: None
        try:
            save_model(loaded.model, ours_out, store=loaded.store)
        finally:
            atomic._fsync = real_fsync

    steps = {
        "onnx": lambda: onnx.save(plain, os.fspath(onnx_out)),
        "ours": lambda: save_model(loaded.model, ours_out, store=loaded.store),
        "onnx_fsync": onnx_fsync,
        "ours_nofsync": ours_nofsync,
        "document": lambda: doc.save(doc_out),
    }
    try:
        for _ in range(repeat):
            for key, step in steps.items():
                t0 = time.perf_counter()
                step()
                times[key].append(time.perf_counter() - t0)
        identical = ours_out.read_bytes() == original and doc_out.read_bytes() == original
        onnx_identical = onnx_out.read_bytes() == original
    finally:
        for p in (ours_out, onnx_out, doc_out):
            p.unlink(missing_ok=True)
    out = {f"{k}_s": min(v) for k, v in times.items()}
    out.update(identical=identical, onnx_identical=onnx_identical)
    return out


def child_huge_inline(path: str, out_dir: str) -> dict:
    """The real >2 GB path: a model holding >2 GB inline in memory, saved with 'preserve'."""
    import onnx

    from editor.errors import SaveError
    from editor.io import SaveOptions, load_model, save_model, tensor_to_numpy, uses_external_data

    loaded = load_model(path)
    result: dict = {}
    t0 = time.perf_counter()
    try:
        save_model(loaded.model, Path(out_dir) / "inline.onnx", store=loaded.store,
                   options=SaveOptions(external="inline"))
        result["inline_refused"] = False
    except SaveError as exc:
        result["inline_refused"] = True
        result["inline_message"] = str(exc)
    result["inline_refusal_s"] = time.perf_counter() - t0
    # build the in-memory inline model (> 2 GB of raw_data in the proto)
    model = onnx.ModelProto()
    model.CopyFrom(loaded.model)
    for t in model.graph.initializer:
        if uses_external_data(t):
            t.raw_data = bytes(loaded.store.read_bytes(t))
            del t.external_data[:]
            t.ClearField("data_location")
    t0 = time.perf_counter()
    save_model(model, Path(out_dir) / "forced.onnx")  # preserve asked; must go external
    result["forced_external_save_s"] = time.perf_counter() - t0
    again = load_model(Path(out_dir) / "forced.onnx")
    ext = [t for t in again.model.graph.initializer if uses_external_data(t)]
    result["forced_external_tensors"] = len(ext)
    result["forced_model_bytes"] = (Path(out_dir) / "forced.onnx").stat().st_size
    result["forced_data_bytes"] = sum(f.stat().st_size for f in again.store.files())
    # spot-check one tensor
    name = ext[0].name
    import numpy as np

    want = next(t for t in loaded.model.graph.initializer if t.name == name)
    result["values_equal"] = bool(np.array_equal(tensor_to_numpy(ext[0], again.store), tensor_to_numpy(want, loaded.store)))
    return result


def make_synthetic_large(folder: Path, gigabytes: float = 2.6) -> Path:
    """A >2 GB external-data model without torch: a MatMul chain over float32 weights written
    straight to ``model.onnx.data`` (4096-aligned, onnx's entry conventions), graph built with
    onnx.helper. Used when make_large_models.py's llama_big_2048 cannot be exported here."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    folder.mkdir(parents=True, exist_ok=True)
    hidden, inter = 2048, 5504
    per_layer = 4 * hidden * hidden * 4 + 3 * hidden * inter * 4
    layers = max(1, int(gigabytes * 1e9 // per_layer) + 1)
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    x = "x"
    offset = 0
    with open(folder / "model.onnx.data", "wb") as data:
        for layer in range(layers):
            shapes = [(hidden, hidden)] * 4 + [(hidden, inter), (hidden, inter), (inter, hidden)]
            names = ["q", "k", "v", "o", "gate", "up", "down"]
            for name, shape in zip(names, shapes):
                arr = rng.random(shape, dtype=np.float32) - 0.5
                offset = -(-offset // 4096) * 4096
                data.seek(offset)
                data.write(arr.tobytes())
                t = TensorProto(name=f"layers.{layer}.{name}.weight", data_type=TensorProto.FLOAT, dims=list(shape),
                                data_location=TensorProto.EXTERNAL)
                for k, v in (("location", "model.onnx.data"), ("offset", str(offset)), ("length", str(arr.nbytes))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                offset += arr.nbytes
                inits.append(t)
            p = f"layers.{layer}."
            for name in ("q", "k", "v"):
                nodes.append(helper.make_node("MatMul", [x, p + name + ".weight"], [p + name], name=p + name))
            nodes.append(helper.make_node("Add", [p + "q", p + "k"], [p + "qk"]))
            nodes.append(helper.make_node("Add", [p + "qk", p + "v"], [p + "qkv"]))
            nodes.append(helper.make_node("MatMul", [p + "qkv", p + "o.weight"], [p + "attn"]))
            nodes.append(helper.make_node("MatMul", [p + "attn", p + "gate.weight"], [p + "g"]))
            nodes.append(helper.make_node("MatMul", [p + "attn", p + "up.weight"], [p + "u"]))
            nodes.append(helper.make_node("Mul", [p + "g", p + "u"], [p + "gu"]))
            nodes.append(helper.make_node("MatMul", [p + "gu", p + "down.weight"], [p + "out"]))
            x = p + "out"
    graph = helper.make_graph(nodes, "synthetic_large", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", hidden])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["B", hidden])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


# ----------------------------------------------------------------------------- driver


def _run_child(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _best(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r]
    return min(ok, key=lambda r: r["seconds"]) if ok else runs[0]


def bench_model(name: str, path: Path, repeat: int, huge: bool) -> dict:
    size = path.stat().st_size
    data = sum(p.stat().st_size for p in path.parent.glob("*.data"))
    print(f"\n== {name}: {path} ({size / 1e6:.1f} MB model, {data / 1e6:.1f} MB of .data files)", flush=True)
    result: dict = {"name": name, "path": str(path), "model_mb": size / 1e6, "data_mb": data / 1e6, "open": {}}
    approaches = ["studio", "onnx_ir", "onnx-noext", "onnx"]
    for approach in approaches:
        runs = [_run_child(["open", approach, str(path)]) for _ in range(repeat)]
        best = _best(runs)
        result["open"][approach] = best
        if "error" in best:
            print(f"  open {approach:11s} error: {best['error']}")
        else:
            print(f"  open {approach:11s} {best['seconds'] * 1000:9.1f} ms   rss {best['rss_mb']:8.1f} MB   "
                  f"rss+ {best['rss_delta_mb']:8.1f} MB   peak+ {best['peak_delta_mb']:8.1f} MB", flush=True)
    s, r = result["open"]["studio"], result["open"]["onnx_ir"]
    if "error" not in s and "error" not in r:
        result["open_ratio_vs_onnx_ir"] = s["seconds"] / r["seconds"]
        print(f"  open ratio studio/onnx_ir = {result['open_ratio_vs_onnx_ir']:.2f}")
    o = result["open"]["onnx"]
    if "error" not in s and "error" not in o:
        result["open_ratio_vs_onnx"] = s["seconds"] / o["seconds"]
        print(f"  open ratio studio/onnx.load = {result['open_ratio_vs_onnx']:.2f}")
    sv = _run_child(["save", str(path), str(max(repeat, 5))])
    result["save"] = sv
    if "error" in sv:
        print(f"  save error: {sv['error']}")
    else:
        sv["ratio"] = sv["ours_s"] / sv["onnx_s"]
        sv["ratio_same_durability"] = sv["ours_s"] / sv["onnx_fsync_s"]
        sv["ratio_nofsync"] = sv["ours_nofsync_s"] / sv["onnx_s"]
        print(f"  save unchanged: ours {sv['ours_s'] * 1000:.1f} ms vs onnx.save {sv['onnx_s'] * 1000:.1f} ms "
              f"= {sv['ratio']:.2f}x; byte-identical: {sv['identical']} (onnx.save: {sv['onnx_identical']})")
        print(f"    with the same fsync: ours/(onnx.save+fsync {sv['onnx_fsync_s'] * 1000:.1f} ms) = "
              f"{sv['ratio_same_durability']:.2f}x; without fsync: ours {sv['ours_nofsync_s'] * 1000:.1f} ms "
              f"= {sv['ratio_nofsync']:.2f}x onnx.save")
        sv["ratio_document"] = sv["document_s"] / sv["onnx_s"]
        print(f"    through the Document (re-writes the file's own bytes): {sv['document_s'] * 1000:.1f} ms "
              f"= {sv['ratio_document']:.2f}x onnx.save, {sv['document_s'] / sv['onnx_fsync_s']:.2f}x onnx.save+fsync")
    if huge:
        with tempfile.TemporaryDirectory(dir=path.parent.parent) as tmp:
            hv = _run_child(["huge", str(path), tmp])
        result["huge"] = hv
        print(f"  >2 GB paths: {hv}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large-dir", action="append", default=None,
                    help="folder of <name>/model.onnx models (repeatable; default /tmp/onnx-large)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--no-huge", action="store_true", help="skip the in-memory >2 GB save (needs ~8 GB RAM)")
    ap.add_argument("--make-synthetic", action="store_true",
                    help="first build <large-dir>/synthetic_2p6gb (a >2 GB external-data model, no torch needed)")
    ap.add_argument("--only", default="", help="comma-separated model folder names under --large-dir")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        if kind == "open":
            out = child_open(rest[0], rest[1])
        elif kind == "save":
            out = child_save(rest[0], int(rest[1]))
        else:
            out = child_huge_inline(rest[0], rest[1])
        print(json.dumps(out))
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.conftest import real_models

    models: list[tuple[str, Path]] = []
    real = max(real_models(), key=lambda p: p.stat().st_size)
    models.append((f"corpus:{real.stem}", real))
    dirs = [Path(d) for d in (a.large_dir or ["/tmp/onnx-large"])]
    if a.make_synthetic and not (dirs[0] / "synthetic_2p6gb" / "model.onnx").exists():
        print(f"building {dirs[0] / 'synthetic_2p6gb'} ...", flush=True)
        make_synthetic_large(dirs[0] / "synthetic_2p6gb")
    only = {n for n in a.only.split(",") if n}
    for large in dirs:
        if not large.is_dir():
            print(f"(no {large}: run shared/corpus/make_large_models.py --out {large} for the large models)")
            continue
        for p in sorted(large.glob("*/model.onnx")):
            if not only or p.parent.name in only:
                models.append((p.parent.name, p))
    results = []
    for name, path in models:
        total = sum(f.stat().st_size for f in path.parent.iterdir() if f.is_file())
        huge = total > 2**31 and not a.no_huge and shutil.disk_usage(path.parent).free > 2 * total
        results.append(bench_model(name, path, a.repeat, huge))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
