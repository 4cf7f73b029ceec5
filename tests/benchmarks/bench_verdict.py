"""Verdicts on planted bugs, side by side with NVIDIA Polygraphy (not part of the default run).

Usage:
    python tests/benchmarks/bench_verdict.py --polygraphy PATH/bin/polygraphy [--extra DIR] [--markdown]

``--polygraphy``: the ``polygraphy`` of a separate environment (``pip install polygraphy
onnxruntime``; never installed into the project's lock). ``--extra``: the folder
``../shared/corpus/fetch_more.sh`` filled (the OCR recogniser, the YOLOX detector); cases
whose model is missing are skipped and said so.

Each case plants one bug in a copy of a real model (the bench plants them; no test names
them) and asks both tools, with their default options, whether the two models agree:

- ``onnx-studio compare A B --json`` (every tensor; exit 0 agree / 1 differ / 2 no verdict);
- Polygraphy's documented layer-wise flow: ``polygraphy run A --onnxrt --onnx-outputs mark
  all --save-inputs --save-outputs``, then ``polygraphy run B --onnxrt --onnx-outputs mark
  all --load-inputs --load-outputs`` (exit 0 pass / 1 fail); its first FAILED output is the
  place it points at. Cases with ``outputs_only`` compare the graph outputs alone.

Reported per case: each tool's verdict and exit code, where it points (ours: the first
divergence's node and body; Polygraphy: the first failing output's producer), the input
shape it used, and the wall time of the whole command (both start a Python process; ours
also a run worker). Wall times on a shared machine move with the load: the load average is
printed with the table, and only the ratio within one row means anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ONNX_STUDIO_CORPUS", ROOT.parent / "shared" / "corpus"))
REAL = CORPUS / "real"


@dataclass
class Case:
    name: str
    bug: str
    a: Path
    make_b: Callable[[Path, Path], None]  # (a, b path) -> writes b
    outputs_only: bool = False
    planted_at: str = ""


def _constant(model: onnx.ModelProto, name: str) -> onnx.TensorProto:
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            return n.attribute[0].t
    return next(t for t in model.graph.initializer if t.name == name)


def _scale_conv_weight(index_of: Callable[[int], int]) -> Callable[[Path, Path], str]:
    def plant(a: Path, b: Path) -> str:
        model = onnx.load(a)
        convs = [n for n in model.graph.node if n.op_type == "Conv"]
        node = convs[index_of(len(convs))]
        t = _constant(model, node.input[1])
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(1.05), t.name))
        onnx.save(model, b)
        return node.name
    return plant


def _flip_dilation(a: Path, b: Path) -> str:
    model = onnx.load(a)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    node = next(n for n in convs[20:] if [list(x.ints) for x in n.attribute if x.name == "kernel_shape"] == [[3, 3]]
                and [list(x.ints) for x in n.attribute if x.name == "strides"] == [[1, 1]])
    for x in node.attribute:
        if x.name == "dilations":
            x.ints[:] = [2, 2]
        if x.name == "pads":
            x.ints[:] = [2, 2, 2, 2]
    onnx.save(model, b)
    return node.name


def _body_weight(a: Path, b: Path) -> str:
    """A 5% scale of the LSTM's input weights, inside both branches of the If around it."""
    model = onnx.load(a)
    outer = next(n for n in model.graph.node if n.op_type == "If" and any(
        x.op_type == "LSTM" for at in n.attribute if at.type == onnx.AttributeProto.GRAPH for x in at.g.node))
    for at in outer.attribute:
        g = at.g
        lstm = next(x for x in g.node if x.op_type == "LSTM")
        feed = next(x for x in g.node if x.output[0] == lstm.input[1])
        src = feed.input[0]
        k = helper.make_node("Constant", [], [src + "_k"], value=numpy_helper.from_array(np.array(1.05, np.float32)))
        mul = helper.make_node("Mul", [src, src + "_k"], [src + "_scaled"], name=src + "_scaled")
        feed.input[0] = src + "_scaled"
        i = list(g.node).index(feed)
        g.node.insert(i, mul)
        g.node.insert(i, k)
    onnx.save(model, b)
    return f"inside {outer.name}"


def _nan_op(a: Path, b: Path) -> str:
    """A Log of a value that can be negative, inserted after the first Conv: NaN from there on."""
    model = onnx.load(a)
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    out = conv.output[0]
    conv.output[0] = out + "_pre"
    log = helper.make_node("Log", [out + "_pre"], [out], name="planted_log")
    i = list(model.graph.node).index(conv)
    model.graph.node.insert(i + 1, log)
    onnx.save(model, b)
    return "planted_log"


def _fp16(a: Path, b: Path) -> str:
    from editor.surgery.precision import convert_precision

    onnx.save(convert_precision(onnx.load(a)).model, b)
    return "(fp16 conversion: fp16 inputs and outputs)"


def _qoperator(a: Path, b: Path) -> str:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    model = onnx.load(a)
    inp = model.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.n = 0

        def get_next(self):  # noqa: ANN202
            self.n += 1
            if self.n > 4:
                return None
            return {inp.name: np.random.default_rng(self.n).standard_normal(shape).astype(np.float32)}

    quantize_static(str(a), str(b), Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return "(int8 QOperator: QLinearConv, QLinearConcat ...)"


def cases(extra: Path | None) -> list[Case]:
    out = [
        Case("paddle detector", "Conv dilation 1 -> 2", REAL / "ppocrv4_det.onnx", _flip_dilation),
        Case("paddle cls", "+5% on a Conv weight", REAL / "ppocr_mobile_v2_cls.onnx", _scale_conv_weight(lambda n: n // 2)),
        Case("silero VAD (If bodies)", "+5% LSTM weight inside an If body", REAL / "silero_vad_16k_op15.onnx", _body_weight),
        Case("paddle detector, outputs only", "Conv dilation 1 -> 2", REAL / "ppocrv4_det.onnx", _flip_dilation,
             outputs_only=True),
        Case("paddle detector vs its fp16", "fp32 vs our fp16 output", REAL / "ppocrv4_det.onnx", _fp16),
        Case("silero VAD v6", "a NaN-making Log after the first Conv", REAL / "fw_silero_vad_v6.onnx", _nan_op),
    ]
    if extra is not None:
        out.insert(2, Case("paddle OCR recogniser (CRNN)", "+5% on a Conv weight", extra / "ppocrv4_rec.onnx",
                           _scale_conv_weight(lambda n: 25)))
        out.append(Case("YOLOX vs its int8 QOperator", "quantize_static", extra / "ddddocr_det_yolox.onnx", _qoperator))
    return out


def _studio(a: Path, b: Path, outputs_only: bool) -> dict:
    cmd = [sys.executable, "-m", "editor.cli", "compare", str(a), str(b), "--json"] + (["--outputs-only"] if outputs_only else [])
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return {"exit": proc.returncode, "verdict": "error", "where": proc.stderr.strip()[-120:], "wall": wall, "shape": ""}
    fd = data.get("first_divergence") or data.get("first_nonfinite")
    where = "-"
    if fd:
        where = f"{fd.get('node') or 'unnamed'} ({fd.get('op_type')})" + (f" {fd['scope']}" if fd.get("scope") else "")
        if fd.get("b_cause"):
            where += f"; {fd['b_cause']}"
    shape = ""
    if data.get("inputs"):
        shape = " ".join(f"{u['name']}{u['shape']}" for u in data["inputs"]["inputs"])
    return {"exit": proc.returncode, "verdict": data.get("verdict", "error"), "where": where, "wall": wall,
            "shape": shape, "reason": data.get("reason", data.get("error", ""))}


_FAILED = re.compile(r"FAILED \| Output: '([^']+)'")
_SHAPE = re.compile(r"Input Metadata.*?\n((?:.*\n){1,4})", re.S)


def _polygraphy(tool: Path, a: Path, b: Path, outputs_only: bool, work: Path) -> dict:
    mark = [] if outputs_only else ["--onnx-outputs", "mark", "all"]
    t = time.perf_counter()
    first = subprocess.run([str(tool), "run", str(a), "--onnxrt", *mark, "--save-inputs", str(work / "in.json"),
                            "--save-outputs", str(work / "a.json")], capture_output=True, text=True)
    second = subprocess.run([str(tool), "run", str(b), "--onnxrt", *mark, "--load-inputs", str(work / "in.json"),
                             "--load-outputs", str(work / "a.json")], capture_output=True, text=True)
    wall = time.perf_counter() - t
    log = first.stdout + first.stderr + second.stdout + second.stderr
    failed = _FAILED.findall(log)
    producers = {o: n for n in onnx.load(b, load_external_data=False).graph.node for o in n.output}
    where = "-"
    if failed:
        node = producers.get(failed[0])
        where = f"{node.name} ({node.op_type})" if node is not None else failed[0]
    if first.returncode != 0:
        verdict = "error (A)"
    elif second.returncode == 0:
        verdict = "PASSED"
    elif failed or "FAILED" in log:
        verdict = "FAILED"
    else:
        verdict = "error (B)"
    shapes = re.findall(r"\{(\w[^}]*?) \[dtype=\w+, shape=\(([^)]*)\)\]", log)
    shape = " ".join(f"{n}[{s}]" for n, s in shapes[:1])
    warned = "warn" if re.search(r"dynamic|Input tensor.*shape.*-1|will use shape", log, re.I) else ""
    return {"exit": second.returncode if first.returncode == 0 else first.returncode, "verdict": verdict,
            "where": where, "wall": wall, "shape": shape + (f" ({warned})" if warned else ""), "failed": len(failed),
            "tail": log.strip().splitlines()[-1][:120] if log.strip() else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polygraphy", type=Path, required=True, help="polygraphy executable of a separate venv")
    parser.add_argument("--extra", type=Path, default=None, help="folder of fetch_more.sh models")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated case names (substring match)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-verdict-") as tmp:
        for case in cases(args.extra):
            if args.only and not any(w in case.name for w in args.only.split(",")):
                continue
            if not case.a.is_file():
                print(f"skipped {case.name}: {case.a} missing", file=sys.stderr)
                continue
            work = Path(tmp) / re.sub(r"\W+", "_", case.name)
            work.mkdir()
            b = work / "b.onnx"
            planted = case.make_b(case.a, b)
            ours = _studio(case.a, b, case.outputs_only)
            theirs = _polygraphy(args.polygraphy, case.a, b, case.outputs_only, work)
            rows.append((case, planted, ours, theirs))
            print(f"{case.name}: planted {planted}; ours {ours['verdict']} (exit {ours['exit']}) at {ours['where']} "
                  f"[{ours['shape']}] {ours['wall']:.1f}s; polygraphy {theirs['verdict']} (exit {theirs['exit']}) at "
                  f"{theirs['where']} [{theirs['shape']}] {theirs['wall']:.1f}s", file=sys.stderr)
    load = os.getloadavg()
    if args.markdown:
        print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
        print("| case | planted at | ONNX Studio: verdict (exit), points at, input | s | Polygraphy: verdict (exit), points at, input | s |")
        print("|---|---|---|---:|---|---:|")
        for case, planted, o, p in rows:
            print(f"| {case.name}: {case.bug} | {planted} | {o['verdict']} ({o['exit']}), {o['where']}, {o['shape']} | "
                  f"{o['wall']:.1f} | {p['verdict']} ({p['exit']}), {p['where']}, {p['shape']} | {p['wall']:.1f} |")
    else:
        print(json.dumps([{"case": c.name, "bug": c.bug, "planted": pl, "ours": o, "polygraphy": p}
                          for c, pl, o, p in rows], indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
