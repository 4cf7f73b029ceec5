"""Expand All / Collapse All / Expand Selected Groups, and the progress bar with Cancel that a
slow re-layout shows (issue 30).

The slow layout is made slow on purpose: the layout job waits for the test to let it go
(or for its cancel token), so nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import onnx  # noqa: E402
import pytest  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import widgets.canvas  # noqa: E402,F401
from PySide6.QtCore import Qt  # noqa: E402

import editor.layout  # noqa: E402
from widgets.canvas.widget import CanvasWidget  # noqa: E402


def _model() -> onnx.ModelProto:
    """/enc/layers.0 and /enc/layers.1 (three nodes each) inside /enc, then /head."""
    nodes, prev = [], "x"
    for i in range(2):
        p = f"/enc/layers.{i}"
        nodes += [helper.make_node("Relu", [prev], [f"{p}/r"], name=f"{p}/Relu"),
                  helper.make_node("Sigmoid", [f"{p}/r"], [f"{p}/s"], name=f"{p}/Sigmoid"),
                  helper.make_node("Mul", [f"{p}/r", f"{p}/s"], [f"{p}/m"], name=f"{p}/Mul")]
        prev = f"{p}/m"
    nodes += [helper.make_node("Tanh", [prev], ["t"], name="/head/Tanh"),
              helper.make_node("Abs", ["t"], ["y"], name="/head/Abs")]
    graph = helper.make_graph(nodes, "enc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def canvas(qtbot):
    model = _model()
    w = CanvasWidget()
    qtbot.addWidget(w)
    w.resize(900, 600)
    w.show()
    g = model.graph
    w.set_source(g, list(range(len(g.node))), opsets={"": 17}, expanded=set(), sync=True)
    return w


def _laid_out(qtbot, w, action) -> None:
    with qtbot.waitSignal(w.controller.laidOut, timeout=30_000):
        action()


def _node_boxes(w) -> int:
    return sum(1 for k in w.scene.node_items() if k.startswith("n:"))


def test_expand_all_shows_every_node_and_collapse_all_closes_every_group(qtbot, canvas):
    assert _node_boxes(canvas) == 0, "everything starts collapsed"
    _laid_out(qtbot, canvas, canvas.controller.expand_all)
    assert canvas.controller.expanded() is None, "Expand All is the flat view"
    assert _node_boxes(canvas) == 8, f"every node drawn, saw {sorted(canvas.scene.node_items())}"
    _laid_out(qtbot, canvas, canvas.controller.collapse_all)
    assert canvas.controller.expanded() == set()
    groups = sorted(k for k in canvas.scene.node_items() if k.startswith("g:"))
    assert groups == ["g:/enc", "g:/head"], f"only the top-level groups, saw {groups}"


def test_expand_selection_opens_the_group_and_everything_inside(qtbot, canvas):
    canvas.scene.select_keys(["g:/enc"])
    _laid_out(qtbot, canvas, lambda: canvas.controller.expand_deep(["/enc"]))
    assert canvas.controller.expanded() == {"/enc", "/enc/layers.0", "/enc/layers.1"}
    assert _node_boxes(canvas) == 6, "the six nodes of /enc drawn, /head still a box"
    assert "g:/head" in canvas.scene.node_items()
    assert canvas.controller.expand_deep(["/enc"]) is False, "nothing more to open"


@pytest.fixture
def held_layout(monkeypatch):
    """Layout jobs wait until ``release`` is set (or they are cancelled)."""
    release = threading.Event()
    real = editor.layout.layout_graph

    def waiting(graph, *, previous=None, progress=None, cancel=None, wrap=False):
        while not release.wait(0.01):
            if cancel is not None and cancel.cancelled:
                raise editor.layout.Cancelled("cancelled while held")
        return real(graph, previous=previous, progress=progress, cancel=cancel, wrap=wrap)

    monkeypatch.setattr(editor.layout, "layout_graph", waiting)
    yield release
    release.set()


def test_a_slow_expand_shows_progress_and_cancel_puts_the_groups_back(qtbot, canvas, held_layout):
    before = canvas.controller.expanded()
    shown = sorted(canvas.scene.node_items())
    canvas.controller.expand_all()
    assert not canvas.busy.isVisible(), "nothing flashes for a layout that may be quick"
    qtbot.waitUntil(canvas.busy.isVisible, timeout=10_000)
    assert canvas.busy.cancel_button.isVisible(), "a view change can be cancelled"
    assert "Laying out" in canvas.busy.label.text()
    qtbot.mouseClick(canvas.busy.cancel_button, Qt.MouseButton.LeftButton)
    assert not canvas.busy.isVisible()
    assert canvas.controller.expanded() == before, "the open groups are those of the picture on screen"
    assert sorted(canvas.scene.node_items()) == shown, "the picture did not change"
    held_layout.set()
    # the next change works as usual
    _laid_out(qtbot, canvas, lambda: canvas.controller.expand_deep(["/head"]))
    assert canvas.controller.expanded() == {"/head"}


def test_a_new_source_cannot_be_cancelled(qtbot, canvas, held_layout):
    g = _model().graph
    canvas.set_source(g, list(range(len(g.node))), opsets={"": 17}, expanded=None)
    qtbot.waitUntil(canvas.busy.isVisible, timeout=10_000)
    assert not canvas.busy.cancel_button.isVisible(), (
        "an edit's re-layout must finish: the picture on screen shows the old document")
    assert canvas.controller.cancel() is False
    held_layout.set()
    qtbot.waitUntil(lambda: not canvas.busy.isVisible(), timeout=30_000)
    assert _node_boxes(canvas) == 8


def _titles(menu) -> list[str]:
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def test_the_window_has_them_in_the_view_menu_the_context_menu_and_on_keys(qtbot, window, tmp_path):
    from tests.widgets.conftest import open_model
    from widgets.actions.context import context_menu

    path = tmp_path / "enc.onnx"
    onnx.save(_model(), path)
    tab = open_model(qtbot, window, path)
    controller, view = tab.canvas.controller, tab.canvas.view
    view_menu = window.registry.menu("View")
    for title in ("Expand All Groups", "Collapse All Groups", "Expand Selected Groups"):
        assert title in _titles(view_menu), f"{title!r} missing from View: {_titles(view_menu)}"
    # a right click on a group box offers all three
    _laid_out(qtbot, tab.canvas, controller.collapse_all)
    item = tab.canvas.scene.item_for("g:/enc")
    pos = view.mapFromScene(item.scene_rect().center())
    titles = _titles(context_menu(window, tab, pos, view.mapToGlobal(pos), exec_menu=False))
    for title in ("Expand All Groups", "Collapse All Groups", "Expand Selected Groups"):
        assert title in titles, f"{title!r} missing from the group's context menu: {titles}"
    # keys, window-wide
    ctrl, alt = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.AltModifier
    # the action follows the canvas's selection (it stayed as the last menu left it, greyed
    # out after a click on a group until the tab changed)
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert tab.canvas.scene.selected_keys() == []
    assert not window.registry.action("view.expand_selection").isEnabled(), "nothing selected to expand"
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert tab.canvas.scene.selected_keys() == ["g:/enc"], tab.canvas.scene.selected_keys()
    assert window.registry.action("view.expand_selection").isEnabled(), "a selected group can be expanded"
    _laid_out(qtbot, tab.canvas, lambda: qtbot.keyClick(view, Qt.Key.Key_BracketRight, ctrl))
    assert controller.expanded() == {"/enc", "/enc/layers.0", "/enc/layers.1"}
    _laid_out(qtbot, tab.canvas, lambda: qtbot.keyClick(view, Qt.Key.Key_BracketRight, ctrl | alt))
    assert controller.expanded() is None
    _laid_out(qtbot, tab.canvas, lambda: qtbot.keyClick(view, Qt.Key.Key_BracketLeft, ctrl | alt))
    assert controller.expanded() == set()
