"""The window asks before it saves a model with errors; Cancel writes nothing."""

from __future__ import annotations

import onnx

from editor.commands import SetAttribute
from tests.widgets.test_edit_support import SQUEEZENET, edit_copy, first_node


def test_save_of_an_invalid_model_asks_first(qtbot, window, tmp_path, monkeypatch):
    import widgets.editing.save as save_module

    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    path = doc.path
    before = path.read_bytes()
    asked = []
    answer = [False]

    def ask(_parent, title, text, details):
        asked.append((title, text, details))
        return answer[0]

    monkeypatch.setattr(save_module, "_ask_invalid", ask)

    # a valid edit saves without a question
    conv = first_node(doc, "Conv")
    doc.execute(SetAttribute(conv, "strides", [2, 2]))
    assert window.save() and asked == []
    # a 2-D Conv with two pads: the question names the error; Cancel writes nothing
    doc.execute(SetAttribute(conv, "pads", [1, 1]))
    saved = path.read_bytes()
    assert not window.save()
    ((title, text, details),) = asked
    assert "error" in text and "pads" in details
    assert path.read_bytes() == saved and doc.is_modified
    assert not editing.save_doc(doc)
    assert path.read_bytes() == saved
    # "save anyway" writes it, errors and all
    answer[0] = True
    assert window.save() and not doc.is_modified
    written = onnx.load(str(path))
    assert [1, 1] in [list(a.ints) for n in written.graph.node for a in n.attribute if a.name == "pads"]
    assert before != path.read_bytes()
