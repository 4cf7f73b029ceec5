"""The scripting example in the README runs as written (docs that cannot rot)."""

from __future__ import annotations

import re

from editor.document import Document
from editor.scripting import run_script_source
from tests.conftest import CORPUS, ROOT


def test_readme_script_example_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (source,) = re.findall(r"```python\n(# make_batch_dynamic.py.*?)```", readme, flags=re.S)
    doc = Document.open(CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx")
    run_script_source(source, doc)
    assert doc.find_nodes("stem")
    assert "pixels" in doc.scope(doc.index.main).input_names()
    assert {p.key: p.value for p in doc.model.metadata_props}["edited_by"] == "onnx-studio"
    doc.undo_all()
    assert doc.serialize() == (CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx").read_bytes()
