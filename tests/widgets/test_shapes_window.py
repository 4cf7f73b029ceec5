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
