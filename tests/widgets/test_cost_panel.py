"""The Cost panel: totals and per-node rows from the cost model, dims typed in, row click
selects the node, heat map over the canvas, recomputed after an edit."""

from __future__ import annotations

from editor.commands.nodes import SetNodeField
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
    top = panel.proxy.index(0, 2)
    macs = [panel.proxy.data(panel.proxy.index(r, 2), 0x0100) for r in range(panel.proxy.rowCount())]
    assert macs == sorted(macs, reverse=True) and macs[0] > 0
    panel.table.clicked.emit(top)
    node = panel.model.rows[panel.proxy.mapToSource(top).row()]
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
    groups = panel.model.rows
    assert 1 < len(groups) < panel.cost.nodes.__len__()
    assert sum(panel.model.data(panel.model.index(r, 2), 0x0100) for r in range(panel.model.rowCount())) == per_node
    panel.table.clicked.emit(panel.proxy.index(0, 0))
    assert len(tab.selection.targets) == len(panel.model.rows[panel.proxy.mapToSource(panel.proxy.index(0, 0)).row()].indices)
