"""The Cost panel: totals and per-node rows from the cost model, dims typed in, row click
selects the node, heat map over the canvas, recomputed after an edit."""

from __future__ import annotations

from editor.commands.nodes import SetNodeField
from widgets.panels.cost import GroupRow
from tests.conftest import CORPUS
from tests.widgets.conftest import open_model


def _show_cost(qtbot, window, path):
    tab = open_model(qtbot, window, path)
    window.cost_dock.show()
    window.cost_dock.raise_()
    qtbot.waitUntil(lambda: window.cost.cost is not None, timeout=10_000)
    return tab


def test_cost_panel_rows_dims_selection_and_heatmap(qtbot, qtmodeltester, window) -> None:
    tab = _show_cost(qtbot, window, CORPUS / "real" / "fw_silero_vad_v6.onnx")
    panel = window.cost
    qtmodeltester.check(panel.model)
    assert panel.model.rowCount() > 0 and "seq_len" in panel.totals.text()  # symbolic until given
    panel.dims_edit.setText("seq_len=512")
    panel.dims_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: "seq_len" not in panel.totals.text(), timeout=10_000)
    assert "MACs" in panel.totals.text()
    # sorted by MACs, largest first: the top row is the node with the most MACs
    top = panel.model.index(0, 2)
    macs = [panel.model.data(panel.model.index(r, 2), 0x0100) for r in range(panel.model.rowCount())]
    assert macs == sorted(macs, reverse=True) and macs[0] > 0
    panel.table.clicked.emit(top)
    node = panel.model.rows[top.row()]
    current = tab.selection.current
    assert current is not None and tab.doc.node(current.node).name == node.name
    panel.heat.setChecked(True)
    assert panel.heatmap is not None and panel.heatmap.visible and panel.heatmap.overlay.cell_count() > 0


def test_cost_follows_an_edit(qtbot, window) -> None:
    tab = _show_cost(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    panel = window.cost
    first = panel.cost
    nid = tab.doc.index.scopes[tab.doc.index.main].node_ids[0]
    tab.doc.execute(SetNodeField(nid, "name", "renamed_by_test"))
    qtbot.waitUntil(lambda: panel.cost is not first, timeout=10_000)
    assert any(n.name == "renamed_by_test" for n in panel.cost.nodes)


def test_profiled_run_puts_time_beside_macs(qtbot, window) -> None:
    tab = _show_cost(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    panel = window.cost
    with qtbot.waitSignal(window.run_dock.profiled, timeout=60_000) as blocker:
        assert window.run_dock.run(profile=True)
    assert blocker.args[0] is tab and blocker.args[1]
    timed = [r for r in range(panel.model.rowCount()) if panel.model.data(panel.model.index(r, 6))]
    assert timed, "no node got a measured time"
    convs = [r for r in timed if panel.model.rows[r].op_type == "Conv"]
    assert convs and all(panel.model.data(panel.model.index(r, 7)) for r in convs)  # MAC/s shown


def test_scope_groups_sum_their_nodes(qtbot, window) -> None:
    tab = _show_cost(qtbot, window, CORPUS / "real" / "silero_vad_16k_op15.onnx")
    panel = window.cost
    panel.dims_edit.setText("batch=1 sequence=512")
    panel.dims_edit.editingFinished.emit()
    qtbot.waitUntil(lambda: panel.model.dims.get("sequence") == 512, timeout=10_000)
    per_node = sum(panel.model.data(panel.model.index(r, 2), 0x0100) for r in range(panel.model.rowCount()))
    panel.grouping.setCurrentIndex(1)
    qtbot.waitUntil(lambda: panel.model.depth == 1 and isinstance(panel.model.rows[0], GroupRow), timeout=10_000)
    groups = panel.model.rows
    assert 1 < len(groups) < panel.cost.nodes.__len__()
    assert sum(panel.model.data(panel.model.index(r, 2), 0x0100) for r in range(panel.model.rowCount())) == per_node
    panel.table.clicked.emit(panel.model.index(0, 0))
    assert len(tab.selection.targets) == len(panel.model.rows[0].indices)


def test_an_edit_changes_only_the_rows_it_touches(qtbot, qtmodeltester, window) -> None:
    """A rename changes its own row (no recomputation, no reset); an edit that changes
    figures moves or changes rows without a reset; only a new set of nodes resets."""
    from editor.commands import DeleteNodes, SetAttribute

    tab = _show_cost(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    panel, model, doc = window.cost, window.cost.model, tab.doc
    signals: list = []
    model.modelReset.connect(lambda: signals.append("reset"))
    model.layoutChanged.connect(lambda: signals.append("layout"))
    model.dataChanged.connect(lambda a, b: signals.append((a.row(), b.row())))
    ids = doc.index.scopes[doc.index.main].node_ids
    doc.execute(SetNodeField(ids[model.rows[5].index], "name", "renamed_by_test"))
    row = next(r for r, n in enumerate(model.rows) if n.name == "renamed_by_test")
    assert signals == [(row, row)], f"a rename should change row {row} alone, saw {signals}"
    assert model.data(model.index(row, 0)) == "renamed_by_test"
    assert not panel._timer.isActive(), "a rename must not recompute the cost"  # noqa: SLF001
    # a Conv with a smaller stride: its figures and those downstream change, rows stay
    conv = next(nid for nid in ids if doc.node(nid).op_type == "Conv"
                and any(a.name == "strides" and list(a.ints) == [2, 2] for a in doc.node(nid).attribute))
    signals.clear()
    first = panel.cost
    doc.execute(SetAttribute(conv, "strides", [1, 1]))
    qtbot.waitUntil(lambda: panel.cost is not first, timeout=10_000)
    assert signals and "reset" not in signals, f"a figures-only edit must not reset the table: {signals}"
    qtmodeltester.check(model)
    keys = [n.macs for n in model.rows]
    assert all(isinstance(k, int) for k in keys) and keys == sorted(keys, reverse=True)
    # deleting a node changes the set of rows: one reset
    signals.clear()
    first = panel.cost
    doc.execute(DeleteNodes([ids[-1]]))
    qtbot.waitUntil(lambda: panel.cost is not first, timeout=10_000)
    assert signals == ["reset"], f"a new set of rows resets once: {signals}"
    qtmodeltester.check(model)


def test_a_cost_panel_behind_a_tab_waits_unless_its_heat_map_is_on(qtbot, window) -> None:
    """A dock tabbed behind another stays visible to Qt: the panel must not recompute the
    whole model's cost for edits nobody sees, but it follows them at once when its tab is
    chosen, and while its heat map is over the canvas."""
    from editor.commands import SetNodeField
    from widgets.common.seen import is_seen
    from tests.widgets.conftest import show_panel

    tab = _show_cost(qtbot, window, CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx")
    panel, doc = window.cost, tab.doc
    (front,) = [d for d in window.tabifiedDockWidgets(window.cost_dock) if d.isVisible()][:1]
    front.raise_()
    qtbot.waitUntil(lambda: not is_seen(panel), timeout=5_000)
    assert panel.isVisible(), "the case this guards: Qt calls a tab behind another visible"
    first = panel.cost
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Relu")
    for op in ("Sigmoid", "Relu"):  # not a rename: the figures may change
        doc.execute(SetNodeField(nid, "op_type", op))
        qtbot.wait(400)  # past the panel's coalescing delay
    assert panel.cost is first and not panel.computing(), "recomputed behind another tab"
    show_panel(qtbot, panel)
    qtbot.waitUntil(lambda: panel.cost is not first, timeout=10_000)
    # the heat map follows the edits whatever is in front of the panel
    panel.heat.setChecked(True)
    assert panel.heatmap is not None and panel.heatmap.visible
    front.raise_()
    qtbot.waitUntil(lambda: not is_seen(panel), timeout=5_000)
    second = panel.cost
    doc.execute(SetNodeField(nid, "op_type", "Sigmoid"))
    qtbot.waitUntil(lambda: panel.cost is not second, timeout=10_000)
