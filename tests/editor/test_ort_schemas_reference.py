"""onnxruntime's schemas joining onnx's registry (editor.ort_schemas) must not break onnx's
reference evaluator: it refuses a registry where one op name has two domains, and when it was
first imported after the registration every import raised, so the shape engine's constant
folding retried it at each node (a full check of DenseNet-121 took 30 s) and never folded.
A fresh process, because the order of first imports is what matters."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
from editor.ort_schemas import ensure_registered
added = ensure_registered().schemas
assert any(d == "com.microsoft" and n == "Trilu" for d, n, _ in added), "no com.microsoft Trilu registered"
import onnx.reference  # raised NotImplementedError ('Trilu' in '' and 'com.microsoft')
from onnx import TensorProto, helper
from editor.shapes.engine import ValueShape
from editor.shapes.fold import fold_small
node = helper.make_node("Add", ["a", "b"], ["c"])
out = fold_small(node, [ValueShape(TensorProto.INT64, (2,), (1, 2)), ValueShape(TensorProto.INT64, (2,), (3, 4))], {"": 17})
assert out is not None and out[0].value == (4, 6), out
print("ok")
"""


def test_reference_evaluator_and_folding_work_after_the_registration() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", f"exit {done.returncode}\n{done.stderr[-3000:]}"
