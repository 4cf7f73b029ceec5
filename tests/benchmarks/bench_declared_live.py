"""Edit-to-problems time with and without the live whole-model declared-shape comparison
(editor.validation.validator.DECLARED_LIVE_*). Run: PYTHONPATH=. python tests/benchmarks/bench_declared_live.py"""
import time, statistics
from editor.document import Document
from editor.validation import Validator
import editor.validation.validator as V
from editor.commands import SetNodeField
from tests.conftest import CORPUS
for name in ["real/ppocrv4_det.onnx", "onnx-backend/light/light_resnet50.onnx", "real/silero_vad_16k_op15.onnx"]:
    for live_declared in (False, True):
        V.DECLARED_LIVE_MAX_NODES = 1000 if live_declared else -1
        doc = Document.open(CORPUS / name); v = Validator(doc); v.validate_all()
        nid = doc.index.main_node_ids()[5] if hasattr(doc.index, "main_node_ids") else doc.scope(doc.index.main).node_ids[5]
        ts = []
        for k in range(20):
            t = time.perf_counter(); doc.execute(SetNodeField(nid, "name", f"n{k}")); ts.append(time.perf_counter() - t)
        print(name, "declared live" if live_declared else "off", f"median {statistics.median(ts)*1000:.1f} ms")
