"""File ▸ Export ▸ Interactive Web Page… (widgets.export.webpage): the page starts on the
picture on screen, and a group opened in the page shows the boxes and edges the window
shows when the same group is opened there (the display model's ids compared)."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"


def _embedded(html: str) -> dict:
    m = re.search(r'<script id="data" type="application/octet-stream">([A-Za-z0-9+/=\s]+)</script>', html)
    assert m, "the page carries its data"
    return json.loads(gzip.decompress(base64.b64decode(m.group(1))))


def _keys(data: dict, view: dict) -> tuple[list[str], set[str]]:
    return [data["boxes"][i][0] for i in view["b"]], {data["edges"][i][0] for i in view["e"]}


@pytest.mark.timeout(240)
def test_export_web_page_from_the_file_menu_matches_the_window(qtbot, window, tmp_path, monkeypatch):
    tab = open_model(qtbot, window, SILERO)
    canvas = tab.canvas
    # the user opened a group first: the page starts there
    group = next(b.key for b in canvas.scene.graph.boxes if b.kind == "group")
    canvas.controller.toggle_group(group, sync=True)
    shown_boxes = [b.key for b in canvas.scene.graph.boxes]
    shown_edges = {e.key for e in canvas.scene.graph.edges}
    positions = dict(canvas.scene.layout_result.positions)

    # ... and had a Node Data Overlay on: it goes with the page, with its legend
    named = [node.name for _s, _nid, node in tab.doc.index.iter_nodes() if node.name and node.op_type != "Constant"][:20]
    data_file = tmp_path / "times.json"
    data_file.write_text(json.dumps({name: float(k) for k, name in enumerate(named)}), encoding="utf-8")
    assert window.show_node_data(tab, str(data_file)) is not None

    out = tmp_path / "silero"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    menu = window.registry.menu("File/Export")
    action = next(a for a in menu.actions() if a.text().replace("&", "") == "Interactive Web Page…")
    assert action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: (tmp_path / "silero.html").exists(), timeout=180_000)
    data = _embedded((tmp_path / "silero.html").read_text(encoding="utf-8"))["panes"][0]
    overlay = data["overlays"][0]
    assert overlay["kind"] == "data" and "times.json" in overlay["title"], overlay["title"]
    assert len(overlay["legend"]) >= 2 and overlay["colours"], "the node data's colours and legend are in the page"
    first = data["views"][0]
    boxes, edges = _keys(data, first)
    assert boxes == shown_boxes, "the page's first view is the picture on screen (same boxes, same order)"
    assert edges == shown_edges, "the page's first view has the window's edges"
    for k, key in enumerate(boxes):
        x, y = positions[key]
        assert (first["p"][2 * k], first["p"][2 * k + 1]) == (round(x, 1), round(y, 1)), \
            f"{key} at {first['p'][2 * k:2 * k + 2]} in the page, at {(x, y)} in the window"
    assert group[2:] in first["x"], f"the group the user opened is open in the page: {first['x']}"

    # open a second group in the window; the page's view of that state has the same ids
    other = next(b.key for b in canvas.scene.graph.boxes if b.kind == "group")
    held = {tuple(v["x"]): v for v in data["views"]}
    want = tuple(sorted(set(first["x"]) | {other[2:]}))
    assert want in held, f"the page holds the view with {other[2:]!r} opened from the first view"
    canvas.controller.toggle_group(other, sync=True)
    boxes, edges = _keys(data, held[want])
    assert boxes == [b.key for b in canvas.scene.graph.boxes], \
        f"opening {other}: the page and the window draw the same boxes"
    assert edges == {e.key for e in canvas.scene.graph.edges}, f"opening {other}: the same edges"
    assert "Exported silero.html" in window.statusBar().currentMessage()


@pytest.mark.timeout(240)
def test_export_web_page_of_a_diff_view_has_both_panes_as_shown(qtbot, window, tmp_path, monkeypatch):
    from editor.diff.display import COLOURS
    from tests.diff_support import CLS, planted_file
    from tests.widgets.test_diff_view import open_view

    path, edit = planted_file(CLS, tmp_path / "cls_edited.onnx")
    view = open_view(qtbot, window, CLS, path)
    out = tmp_path / "diff.html"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    menu = window.registry.menu("File/Export")
    action = next(a for a in menu.actions() if a.text().replace("&", "") == "Interactive Web Page…")
    window.registry.refresh()
    assert action.isEnabled(), "the export is offered for a diff view"
    action.trigger()
    qtbot.waitUntil(out.exists, timeout=180_000)
    data = _embedded(out.read_text(encoding="utf-8"))
    assert len(data["panes"]) == 2
    for pane, side in zip(data["panes"], ("a", "b")):
        scene = view.panes[side].tab.canvas.scene
        boxes, edges = _keys(pane, pane["views"][0])
        assert boxes == [b.key for b in scene.graph.boxes], f"side {side}: the pane on screen, same boxes"
        assert edges == {e.key for e in scene.graph.edges}, f"side {side}: same edges"
        nid = next(k for k, n in pane["nodes"].items() if n[2] == edit["conv"])
        assert pane["overlays"][0]["colours"][f"n:{nid}"] == COLOURS["changed"], f"side {side}: the edit is marked"


@pytest.mark.timeout(120)
def test_the_tabs_heat_map_goes_with_the_page(qtbot, window, tmp_path):
    """The overlay the tab's layer shows (here the profile heat map) is the page's, with the
    window's legend: the heat scale at the largest box, a quarter and a sixteenth of it."""
    from widgets.export.webpage import active_overlay, tab_page
    from widgets.overlays.heatmap import HeatMap, fmt_us

    tab = open_model(qtbot, window, CORPUS / "real" / "magika_standard_v3_3.onnx")
    ids = list(tab.doc.main.node_ids)
    heat = HeatMap(tab)
    heat.set_node_times({nid: float(100 * (k + 1)) for k, nid in enumerate(ids[:10])})
    heat.set_visible(True)
    makers = active_overlay(tab)
    assert len(makers) == 1, "the shown heat map is exported"
    page = tab_page(tab, overlays=makers)()
    overlay = page.panes[0]["overlays"][0]
    assert overlay["kind"] == "profile" and overlay["title"] == heat.title, overlay["title"]
    node = f"n:{ids[9]}"
    drawn = {b[0] for b in page.panes[0]["boxes"]}
    assert node in drawn and overlay["values"][node] == fmt_us(1000.0), "a node's box shows its own time"
    assert len(overlay["legend"]) == 3 and overlay["legend"][0][1] in overlay["values"].values(), \
        f"the legend starts at the largest box's amount: {overlay['legend']}"
    heat.set_visible(False)
    assert active_overlay(tab) == [], "nothing shown, nothing exported"
