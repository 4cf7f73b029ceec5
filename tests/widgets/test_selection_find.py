"""Selection sync both ways, and Find.

outline click -> the node is selected (and centred) on the canvas, opening the groups or
switching to the subgraph it lies in; canvas selection -> properties and op docs show the
node; find by name, op type, regex and attribute value; Enter steps through the matches.
"""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model, show_outline
from widgets.common.selection import Target

#: the ONNX backend suite's SqueezeNet (it was the bundled sample; these tests know its nodes)
SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


def _wait_selected(qtbot, tab, key: str) -> None:
    qtbot.waitUntil(lambda: key in tab.canvas.scene.selected_keys(), timeout=30_000)


def test_outline_click_selects_on_canvas(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    show_outline(qtbot, window)
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Conv")
    index = window.outline.model.index_for(Target.of_node(doc.index.main, nid))
    assert index.isValid()
    window.outline.select_index(index)
    _wait_selected(qtbot, tab, f"n:{nid}")
    assert tab.selection.current == Target.of_node(doc.index.main, nid)
    # centred: the item is inside the visible part of the view
    item = tab.canvas.scene.item_for(f"n:{nid}")
    assert tab.canvas.view.visible_scene_rect().intersects(item.scene_rect())
    # the other panels followed
    assert window.properties.rows()["Node/Op type"] == "Conv"
    assert "kernel_shape" in window.op_docs.text()


def test_canvas_selection_shows_node_in_properties(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    show_outline(qtbot, window)
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Concat")
    node = doc.node(nid)
    tab.canvas.view.select_keys([f"n:{nid}"])
    assert tab.selection.current == Target.of_node(doc.index.main, nid)
    rows = window.properties.rows()
    assert rows["Node/Name"] == node.name
    assert rows["Node/Op type"] == "Concat"
    assert rows["Attributes (1)/axis"] == "1"
    assert any(k.startswith("Inputs (") for k in rows)
    # the outline follows too
    current = window.outline.tree.currentIndex()
    src = window.outline.proxy.mapToSource(current)
    assert window.outline.model.target(src) == Target.of_node(doc.index.main, nid)
    # and op docs show Concat at the model's opset
    assert "Concat" in window.op_docs.text()


def test_properties_rows_navigate(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Relu")
    tab.selection.select([Target.of_node(doc.index.main, nid)], "test")
    tree = window.properties.tree
    items = tree.findItems("X", __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.MatchFlag.MatchRecursive)
    assert items, "Relu input row"
    tree.itemClicked.emit(items[0], 1)
    current = tab.selection.current
    assert current.kind == "value" and current.name == doc.node(nid).input[0]
    assert window.properties.rows()["Value/Name"] == current.name


def test_node_in_closed_group_and_subgraph_is_revealed(qtbot, window):
    tab = open_model(qtbot, window, SILERO)
    show_outline(qtbot, window)
    doc = tab.doc
    # a main-graph node that the first view does not draw (inside a closed group)
    hidden = [n for n in doc.main.node_ids if tab.canvas.scene.item_for(f"n:{n}") is None
              and doc.node(n).op_type != "Constant"]
    assert hidden, "silero's first view should keep some groups closed"
    nid = hidden[len(hidden) // 2]
    window.outline.select_index(window.outline.model.index_for(Target.of_node(doc.index.main, nid)))
    _wait_selected(qtbot, tab, f"n:{nid}")
    # a node inside an If body: the canvas switches to that graph
    sub = next(s for s in doc.index.scopes.values() if s.kind == "subgraph" and s.node_ids)
    inner = next(n for n in sub.node_ids if doc.node(n).op_type != "Constant")
    window.outline.select_index(window.outline.model.index_for(Target.of_node(sub.id, inner)))
    qtbot.waitUntil(lambda: tab.scope_id == sub.id, timeout=10_000)
    _wait_selected(qtbot, tab, f"n:{inner}")
    window.show_main_graph()
    qtbot.waitUntil(lambda: tab.scope_id == doc.index.main, timeout=10_000)


def _find(window, text, *, regex=False):
    panel = window.find_panel
    panel.regex.setChecked(regex)
    panel.query.setText(text)
    panel.run()
    return panel.matches


def test_find_by_name_op_tensor_attribute_regex(qtbot, window):
    import re

    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    window.show_find()
    assert window.find_dock.isVisible()
    convs = [n for n in doc.main.node_ids if doc.node(n).op_type == "Conv"]
    by_op = _find(window, "Conv")
    assert {m.target.node for m in by_op if m.what == "op"} == set(convs)
    # by tensor name
    tensor = doc.main.initializer_names()[0]
    assert any(m.what == "tensor" and m.text == tensor for m in _find(window, tensor))
    # regex over tensor names; a bad regex is reported, not raised
    pattern = r"^fire\d+/squeeze1x1_[wb]_0$"
    names = {m.text for m in _find(window, pattern, regex=True) if m.what == "tensor"}
    every = {n for s in doc.index.scopes.values() for n in s.defined_names() if re.match(pattern, n)}
    assert names and names == every
    assert _find(window, "fire[", regex=True) == [] and "bad regex" in window.find_panel.status.text()
    # attribute values: Dropout ratio=0.5
    by_attr = _find(window, "0.5")
    assert any(m.what == "attribute" and m.text == "ratio=0.5" for m in by_attr)


def test_find_by_node_name(qtbot, window):
    tab = open_model(qtbot, window, SILERO)
    doc = tab.doc
    named = [(sid, n) for s in doc.index.scopes.values() for sid, n in ((s.id, n) for n in s.node_ids)
             if doc.node(n).name]
    sid, nid = named[len(named) // 2]
    name = doc.node(nid).name
    matches = _find(window, name)
    assert any(m.what == "name" and m.target == Target.of_node(sid, nid) for m in matches)
    # case-insensitive by default, case-sensitive on request
    assert any(m.target.node == nid for m in _find(window, name.upper())) or name.upper() == name
    window.find_panel.case.setChecked(True)
    if name.upper() != name:
        assert not any(m.target.node == nid and m.what == "name" for m in _find(window, name.upper()))
    window.find_panel.case.setChecked(False)


def test_find_highlights_all_and_enter_steps(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    matches = _find(window, "MaxPool")
    pools = [n for n in doc.main.node_ids if doc.node(n).op_type == "MaxPool"]
    assert len(pools) == 3
    # every match highlighted (selected) on the canvas
    for nid in pools:
        _wait_selected(qtbot, tab, f"n:{nid}")
    panel = window.find_panel
    from PySide6.QtCore import Qt

    seen = []
    for _ in range(len(matches) + 1):
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
        seen.append(tab.selection.current)
    assert seen[0] == matches[0].target and seen[1] == matches[1].target
    assert seen[len(matches)] == matches[0].target  # wraps around
    assert len(set(tab.canvas.scene.selected_keys()) & {f"n:{n}" for n in pools}) == 3


@pytest.mark.parametrize("what", ["model", "tensor", "value"])
def test_properties_for_model_tensor_value(qtbot, window, what):
    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    main = doc.index.main
    if what == "model":
        tab.selection.select([Target.model()], "test")
        assert window.properties.rows()["Opset imports/ai.onnx"] == "9"
    elif what == "tensor":
        name = doc.main.initializer_names()[0]
        tab.selection.select([Target.of_tensor(main, name)], "test")
        rows = window.properties.rows()
        assert rows["Tensor/Name"] == name and rows["Tensor/Stored as"] == "initializer"
    else:
        node = doc.node(doc.main.node_ids[1])
        name = node.output[0]
        tab.selection.select([Target.of_value(main, name)], "test")
        rows = window.properties.rows()
        assert rows["Value/Name"] == name
        assert rows["Value/Producer"].endswith(f"({node.op_type})")
        assert any(k.startswith("Consumers (") for k in rows)
