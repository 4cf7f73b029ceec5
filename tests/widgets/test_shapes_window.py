"""The window's share of the shape engine and of outside data: edges labelled with inferred
shapes, and per-node data from a file coloured over the canvas."""

from __future__ import annotations

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model


def test_node_data_overlay_colours_named_nodes(qtbot, window, tmp_path) -> None:
    tab = open_model(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    names = [n.name for n in tab.doc.model.graph.node if n.name][:5]
    data = tmp_path / "scores.csv"
    data.write_text("name,score\n" + "".join(f"{n},{k / 10}\n" for k, n in enumerate(names)) + "nosuchnode,1\n")
    overlay = window.show_node_data(tab, str(data))
    assert overlay is not None and len(overlay.values) >= len(names) and overlay.data.unmatched == ["nosuchnode"]
    assert overlay.visible and overlay.overlay.cell_count() > 0


def test_canvas_edges_carry_inferred_shapes(qtbot, window) -> None:
    tab = open_model(qtbot, window, CORPUS / "real" / "ppocrv4_det.onnx")
    tab.canvas.controller.set_source(tab._graph, list(tab.doc.scope(tab.doc.index.main).node_ids),
                                     opsets=tab.doc.opsets(), value_info=tab._edge_shapes(tab.doc.scope(tab.doc.index.main)),
                                     expanded=None, sync=True)
    edges = tab.canvas.scene.graph.edges
    assert sum(1 for e in edges if e.label) >= 0.95 * len(edges)


def test_refresh_shapes_in_the_window_is_one_undoable_registry_action(qtbot, window) -> None:
    import onnx

    from widgets.shapes_refresh import RefreshShapesDialog

    tab = open_model(qtbot, window, CORPUS / "real" / "ppocrv4_det.onnx")
    doc = tab.doc
    assert "graph.refresh_shapes" in window.registry
    action = window.registry.action("graph.refresh_shapes")
    assert action.isEnabled()
    menu_titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "Graph" in menu_titles
    before = [vi.SerializeToString() for vi in doc.model.graph.value_info]
    depth = doc.stack.index
    chosen: list[str] = []

    def pick(dialog: RefreshShapesDialog) -> bool:
        dialog.group.button(0).setChecked(True)  # update: correct stale, add missing
        chosen.append(dialog.mode())
        return True

    window.refresh_shapes.run_dialog = pick
    action.trigger()
    qtbot.waitUntil(lambda: doc.stack.index == depth + 1, timeout=30_000)
    assert chosen == ["update"]
    names = {n for node in doc.model.graph.node for n in node.output}
    declared = {vi.name for vi in doc.model.graph.value_info}
    interface = {vi.name for vi in doc.model.graph.output}
    # the Paddle detector declares almost nothing; now nearly every inner value has a shape
    assert len(declared) >= 0.95 * len(names - interface)
    onnx.checker.check_model(doc.model)
    doc.undo()
    assert [vi.SerializeToString() for vi in doc.model.graph.value_info] == before
    # strip removes every entry, and undo brings them back in their order
    doc.redo()
    window.refresh_shapes.start(doc, "strip")
    assert len(doc.model.graph.value_info) == 0
    doc.undo()
    assert len(doc.model.graph.value_info) == len(declared)


def test_refresh_shapes_refuses_when_the_model_changed_meanwhile(qtbot, window) -> None:
    from editor.commands import SetNodeField

    tab = open_model(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    doc = tab.doc
    behaviour = window.refresh_shapes
    depth = doc.stack.index
    behaviour.start(doc, "update")
    nid = doc.scope(doc.index.main).node_ids[0]
    doc.execute(SetNodeField(nid, "doc_string", "edited while inferring"))  # lands before the worker's table
    qtbot.waitUntil(lambda: behaviour._timer is not None and not behaviour._timer.isActive(), timeout=30_000)
    assert doc.stack.index == depth + 1  # the rename only: the stale table was not applied
    from widgets.editing.common import last_refusal

    assert "changed" in last_refusal[0]
