"""fp16 conversion: ours (editor.surgery.precision) vs onnxconverter-common's
``convert_float_to_float16`` on the real and light corpus models.

For each model and each tool: is the result valid (``onnx.checker`` full), does onnxruntime
load it (CPU), the max absolute error of every output against the fp32 model on the same
random inputs, and the file size. Prints a Markdown table (the README's).

    .venv/bin/python tests/benchmarks/bench_fp16.py [--keep-io-types] [MODEL ...]

onnxconverter-common is a benchmark-only peer (``pip install onnxconverter-common``), never
a dependency of the project.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from editor.runtime import Runner  # noqa: E402
from editor.surgery.compare import compare_models, inputs_for, run_values  # noqa: E402
from editor.surgery.precision import convert_precision  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"

#: inputs random values cannot stand in for: audio windows of the right length, a sample rate
DIMS = {"silero_vad_16k_op15.onnx": {"batch": 1, "sequence": 512},
        "silero_vad_half.onnx": {"batch": 1, "sequence": 512},
        "asr_prep_kaldi.onnx": {"batch_size": 1, "N": 16000}}


def _inputs(path: Path, model: onnx.ModelProto) -> dict:
    import numpy as np

    x = inputs_for(model, dims=DIMS.get(path.name))
    if "sr" in x:
        x["sr"] = np.array(16000, dtype=np.int64)
    if "waveforms_lens" in x:
        x["waveforms_lens"] = np.full(x["waveforms_lens"].shape, x["waveforms"].shape[-1], dtype=np.int64)
    return x


def _valid(m: onnx.ModelProto) -> str:
    try:
        onnx.checker.check_model(m, full_check=True)
        return "yes"
    except Exception as exc:  # noqa: BLE001
        return "no (" + str(exc).strip().splitlines()[0][:60].replace("|", "/") + ")"


def _loads(m: onnx.ModelProto) -> str:
    import onnxruntime as ort

    try:
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return "yes"
    except Exception as exc:  # noqa: BLE001
        msg = str(exc).strip().splitlines()[0]
        return "no (" + msg[msg.find("]") + 1:][:70].strip().replace("|", "/") + ")"


def _errors(runner: Runner, ref_model: onnx.ModelProto, m: onnx.ModelProto, x: dict, ref: dict | None) -> str:
    if ref is None:
        return "fp32 did not run on random inputs"
    try:
        cmp = compare_models(runner, ref_model, m, x, reference_values=ref)
    except Exception as exc:  # noqa: BLE001
        return "did not run: " + str(exc)[:50].replace("|", "/")
    parts = []
    for e in cmp.errors:
        parts.append(f"{e.max_abs:.2g}" + (f" ({e.non_finite} non-finite)" if e.non_finite else ""))
    return ", ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--keep-io-types", action="store_true")
    args = ap.parse_args()
    from onnxconverter_common import float16

    paths = [Path(p) for p in args.models] or (sorted((CORPUS / "real").glob("*.onnx"))
                                               + sorted((CORPUS / "onnx-backend" / "light").glob("*.onnx")))
    print(f"keep_io_types={args.keep_io_types}; error = max |fp16 - fp32| per output, same random inputs\n")
    print("| model | fp32 KB | ours: valid / loads in ORT | ours: max error per output | ours KB "
          "| onnxconverter-common: valid / loads | its max error per output | its KB |")
    print("|---|---|---|---|---|---|---|---|")
    with Runner() as runner:
        for p in paths:
            model = onnx.load(str(p))
            x = _inputs(p, model)
            try:
                ref = run_values(runner, model, x)
            except Exception:  # noqa: BLE001
                ref = None
            row = [p.name, f"{model.ByteSize() // 1024}"]
            try:
                ours = convert_precision(model, keep_io_types=args.keep_io_types).model
                row += [f"{_valid(ours)} / {_loads(ours)}", _errors(runner, model, ours, x, ref),
                        f"{ours.ByteSize() // 1024}"]
            except Exception as exc:  # noqa: BLE001
                row += [f"refused: {exc}"[:80], "-", "-"]
            try:
                theirs = float16.convert_float_to_float16(model, keep_io_types=args.keep_io_types)
                loads = _loads(theirs)
                err = _errors(runner, model, theirs, x, ref) if loads == "yes" else "-"
                row += [f"{_valid(theirs)} / {loads}", err, f"{theirs.ByteSize() // 1024}"]
            except Exception as exc:  # noqa: BLE001
                row += [("raised: " + str(exc).splitlines()[0])[:80].replace("|", "/"), "-", "-"]
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
