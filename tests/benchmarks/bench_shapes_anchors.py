"""Values whose full shape is known: the shape engine against onnx and onnxruntime.

Run:  PYTHONPATH=. python tests/benchmarks/bench_shapes_anchors.py [MODEL.onnx ...]

Default models: the corpus's real/ folder and, when present, /tmp/onnx-corpus-extra (the
models of ``shared/corpus/fetch_more.sh``). For each model prints the number of main-graph
node outputs with a full shape by the engine, by ``onnx.shape_inference.infer_shapes(
data_prop=True)`` and by ``onnxruntime.tools.symbolic_shape_infer`` ("fails" when it
raises), and the time each took. Counting as in tests/editor/test_shapes_anchors.py.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.shapes import infer_model  # noqa: E402
from tests.conftest import CORPUS  # noqa: E402
from tests.editor.test_shapes_anchors import _onnx, _ort  # noqa: E402


def main() -> None:
    paths = [Path(a) for a in sys.argv[1:]] or sorted((CORPUS / "real").glob("*.onnx")) + sorted(
        Path("/tmp/onnx-corpus-extra").glob("*.onnx"))
    print(f"{'model':34} {'engine':>14} {'onnx':>14} {'ort symbolic':>16}")
    for path in paths:
        model = onnx.load(str(path))
        names = {n for node in model.graph.node for n in node.output if n}
        t = time.perf_counter()
        table = infer_model(model)
        ours = sum(1 for n in names if table.get(n).dims is not None and None not in table.get(n).dims)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        on = _onnx(model, names)
        t_onnx = time.perf_counter() - t
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            ort = _ort(model, names, Path(tmp))
        t_ort = time.perf_counter() - t
        mark = "" if ours >= max(on, ort) else "  <-- fewer"
        print(f"{path.stem[:34]:34} {ours:5} {t_ours:6.2f}s {on:5} {t_onnx:6.2f}s {ort or 'fails':>7} {t_ort:6.2f}s"
              f"  / {len(names)}{mark}")


if __name__ == "__main__":
    main()
