"""Held-out check of the shape engine: every shape it states equals a real run's.

Run:  PYTHONPATH=. python tests/benchmarks/bench_shapes_vs_run.py [--folder /tmp/onnx-corpus-extra]

The models of ``shared/corpus/fetch_more.sh`` (not in the default test run, which checks
the corpus's real/ models the same way in tests/editor/test_shapes_vs_run.py): each runs in
onnxruntime with every intermediate value captured, at the dims below; prints per model how
many values the engine stated a full shape for, how many were compared with the run, and
every contradiction (there should be none).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.runtime import Runner  # noqa: E402
from editor.runtime.inputs import make_inputs  # noqa: E402
from editor.runtime.intermediates import value_scopes  # noqa: E402
from editor.runtime.source import ModelSource  # noqa: E402
from editor.shapes import evaluate, infer_model  # noqa: E402

DIMS = {
    "ddddocr_common_old_int8.onnx": {"image_width": 200},
    "ddddocr_det_yolox.onnx": {},
    "minilm_l6_v2_int8w.onnx": {"batch": 2, "sequence": 16},
    "ppocrv4_rec.onnx": {"p2o.DynamicDimension.0": 1, "?": 48, "p2o.DynamicDimension.1": 320},  # a dim named "?"
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", type=Path, default=Path("/tmp/onnx-corpus-extra"))
    args = ap.parse_args()
    total_wrong = 0
    with Runner() as runner:
        for name, dims in DIMS.items():
            path = args.folder / name
            if not path.is_file():
                print(f"{name}: missing (run shared/corpus/fetch_more.sh)")
                continue
            model = onnx.load(str(path))
            table = infer_model(model, dims)
            scopes = value_scopes(model)
            outputs = list(dict.fromkeys(scopes.main + scopes.outputs))
            feeds = make_inputs(model, "random", dims=dims, seed=0)
            result = runner.run(ModelSource.from_path(path), feeds, outputs=outputs, timeout=300)
            if not result.ok:
                print(f"{name}: run failed: {result.error}")
                continue
            stated = compared = 0
            wrong = []
            for value in outputs:
                vs = table.get(value)
                if vs.dims is None:
                    continue
                shape = [evaluate(d, dims) if d is not None else None for d in vs.dims]
                if None in shape:
                    continue
                stated += 1
                observed = getattr(result.value(value), "shape", None) if value in result.outputs else None
                if observed is None:
                    continue
                compared += 1
                if list(observed) != shape:
                    wrong.append(f"{value}: stated {shape}, ran {list(observed)}")
            total_wrong += len(wrong)
            print(f"{name}: {len(outputs)} values, {stated} with a stated shape, {compared} compared with the run, "
                  f"{len(wrong)} contradictions")
            for w in wrong[:5]:
                print("   ", w)
    print(f"contradictions in all: {total_wrong}")


if __name__ == "__main__":
    main()
