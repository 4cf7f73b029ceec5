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

    from widgets.editing.shapes_refresh import RefreshShapesDialog

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


def _stale_model(path) -> None:
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"), h.make_node("Reshape", ["x", "s"], ["y"], name="reshape"),
             h.make_node("Relu", ["y"], ["z"], name="relu")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                     [h.make_tensor_value_info("z", T.FLOAT, None)],
                     value_info=[h.make_tensor_value_info("y", T.FLOAT, ["n", 4, 1])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))


def test_edge_tooltip_says_where_the_shape_comes_from(qtbot, window, tmp_path) -> None:
    path = tmp_path / "stale.onnx"
    _stale_model(path)
    tab = open_model(qtbot, window, path)
    scene = tab.canvas.scene
    edges = {e.value: e for e in scene.graph.edges}
    y = scene.value_tooltip(edges["y"])
    assert "declared in the file: float32 [n, 4, 1]" in y and "inferred: float32 [n, 4]" in y
    assert "conflict" in y and "rank" in y
    x = scene.value_tooltip(edges["x"])
    assert "declared in the file" in x and "conflict" not in x
    # the conflict is a problem of the document, drawn as a badge like any other
    problems = [p for p in tab.validator.problems if p.value == "y"]
    assert problems and all(p.code == "declared-dim" for p in problems)


def test_large_models_are_labelled_off_the_gui_thread(qtbot, window, monkeypatch) -> None:
    import widgets.view.shape_labels as sl

    monkeypatch.setattr(sl, "SYNC_MAX_NODES", 10)  # squeezenet (66 nodes) counts as large
    tab = open_model(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    labels = tab.shape_labels
    qtbot.waitUntil(lambda: labels.live is not None, timeout=30_000)
    # once the table arrived the edges are labelled from it, and edits update it in place
    qtbot.waitUntil(lambda: all(e.label for e in tab.canvas.scene.graph.edges), timeout=30_000)
    from editor.commands import SetNodeField

    first = tab.doc.scope(tab.doc.index.main).node_ids[0]
    tab.doc.execute(SetNodeField(first, "name", "renamed"))
    assert labels.live is not None and labels.pending is None


def test_shapes_of_the_last_run_replace_the_symbolic_ones(qtbot, window) -> None:
    tab = open_model(qtbot, window, CORPUS / "real" / "fw_silero_vad_v6.onnx")
    dock = window.run_dock
    action = window.registry.action("view.shapes_of_last_run")
    assert not action.isEnabled()  # no run yet
    dock.panel.options.set_capture("all")
    with qtbot.waitSignal(dock.controller.finished, timeout=90_000) as blocker:
        assert dock.run()
    qtbot.waitUntil(lambda: not dock.service.busy)
    result = blocker.args[0]
    assert result.ok, result.error
    assert action.isEnabled()

    def labels() -> dict[str, str]:
        return {e.value: e.label for e in tab.canvas.scene.graph.edges}

    symbolic = labels()
    assert any("seq_len" in (text or "") for text in symbolic.values())
    action.setChecked(True)
    qtbot.waitUntil(lambda: labels() != symbolic, timeout=10_000)
    seen = labels()
    assert not any("seq_len" in (text or "") for text in seen.values())
    # every captured tensor's edge shows its observed size, and the tooltip says so
    for name, rec in result.outputs.items():
        if name in seen and rec.shape:
            assert "x".join(str(d) for d in rec.shape) in seen[name].replace("×", "x") or rec.shape == ()
    edge = next(e for e in tab.canvas.scene.graph.edges if e.value in result.outputs)
    assert "seen in the last run" in tab.canvas.scene.value_tooltip(edge)
    action.setChecked(False)
    qtbot.waitUntil(lambda: labels() == symbolic, timeout=10_000)


def test_labels_after_edits_equal_a_fresh_labelling(qtbot, window) -> None:
    from editor.commands import DeleteNodes, SetAttribute, SetNodeField
    from editor.commands.values import RenameValue
    from editor.shapes import infer_model
    from editor.shapes.declare import label_value_info

    tab = open_model(qtbot, window, CORPUS / "real" / "ppocrv4_det.onnx")
    doc = tab.doc
    labels = tab.shape_labels

    def check() -> None:
        graph = doc.model.graph
        ours = {k: v.SerializeToString() for k, v in labels.value_info(graph).items()}
        fresh = {k: v.SerializeToString() for k, v in label_value_info(graph, infer_model(doc.model)).items()}
        assert ours == fresh

    check()
    scope = doc.scope(doc.index.main)
    conv = next(nid for nid in scope.node_ids if doc.node(nid).op_type == "Conv")
    doc.execute(SetAttribute(conv, "strides", [1, 1]))
    check()
    doc.execute(SetNodeField(conv, "name", "first_conv"))
    check()
    relu = next(nid for nid in scope.node_ids if doc.node(nid).op_type in ("Relu", "HardSwish", "Sigmoid"))
    doc.execute(RenameValue(doc.index.main, doc.node(relu).output[0], "renamed_value"))
    check()
    doc.execute(DeleteNodes([relu], reconnect=True))
    check()
    for _ in range(4):
        doc.undo()
        check()
