"""The diff view (widgets/diffview): two real models side by side in one tab, coloured by
their diff, walked with F8 / Shift+F8, a click in one pane selecting its counterpart in
the other, linked panning, groups opening together, cancel, "What Did I Change?", the
compare heat map in both panes, and ``onnx-studio diff --render``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from editor.diff.display import CHANGED, REMOVED, REWRITTEN, SAME
from tests.diff_support import CLS, planted_file
from tests.quantize_support import MAGIKA
from tests.widgets.conftest import LOAD_TIMEOUT_MS, open_model
from widgets.common.selection import Target
from widgets.diffview import open_diff_view
from widgets.diffview.actions import side_of_path

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):  # noqa: ANN001, ANN201
    return planted_file(CLS, tmp_path_factory.mktemp("planted") / "cls_edited.onnx")


def open_view(qtbot, window, a, b):  # noqa: ANN001, ANN201
    view = open_diff_view(window, side_of_path(a), side_of_path(b))
    qtbot.waitUntil(lambda: view.is_ready, timeout=LOAD_TIMEOUT_MS)
    return view


def names_of(doc, status: dict[int, str]) -> dict[str, str]:  # noqa: ANN001
    return {doc.node(n).name: st for n, st in status.items() if st != SAME}


def selected_nodes(tab) -> set[int]:  # noqa: ANN001
    return {t.node for t in tab.selection.targets if t.kind == "node"}


@pytest.mark.timeout(180)
def test_planted_edits_marked_on_both_sides_walked_with_f8_and_clicks_follow(qtbot, window, planted) -> None:  # noqa: ANN001
    path, edit = planted
    view = open_view(qtbot, window, CLS, path)
    pa, pb = view.panes["a"].tab, view.panes["b"].tab
    assert window.current_tab() is None and window.tab_list() == [], "the view holds no document tab"
    display = view.display
    assert names_of(pa.doc, display.status_a) == {edit["conv"]: CHANGED, edit["victim"]: REMOVED,
                                                  edit["renamed"]: CHANGED}, display.summary
    assert names_of(pb.doc, display.status_b) == {edit["conv"]: CHANGED, edit["renamed"]: CHANGED}
    # the canvas colours say the same: every marked box of a pane is one of those nodes'
    for pane, want in ((view.panes["a"], 3), (view.panes["b"], 2)):
        cells = {k: st for k, st in pane.colours.statuses_by_key().items() if st != SAME}
        assert pane.colours.visible and 1 <= len(cells) <= want, cells
    # F8 visits exactly the three edits in A's order, and wraps; Shift+F8 goes back
    visited = []
    for _ in range(3):
        QTest.keyClick(window, Qt.Key.Key_F8)
        stop = view.stops[view.current]
        qtbot.waitUntil(lambda s=stop: selected_nodes(pa) == set(s.a) and selected_nodes(pb) == set(s.b))
        qtbot.waitUntil(lambda s=stop: all(pa.canvas.scene.item_for(f"n:{n}") is not None for n in s.a))
        visited.append(pa.doc.node(stop.a[0]).name)
    order = [pa.doc.node(n).name for n in pa.doc.main.node_ids]
    assert visited == sorted([edit["conv"], edit["victim"], edit["renamed"]], key=order.index), visited
    assert view.position.text() == "3 of 3"
    QTest.keyClick(window, Qt.Key.Key_F8)
    assert view.current == 0
    QTest.keyClick(window, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)
    assert view.current == 2
    # the attribute's stop shows before and after; the removal's names the rewired consumer
    QTest.keyClick(window, Qt.Key.Key_F8)
    conv_stop = next(k for k, s in enumerate(view.stops) if pa.doc.node(s.a[0]).name == edit["conv"])
    view.go_to(conv_stop)
    assert ("attribute strides", "[1, 1]", "[2, 2]") in view.details.rows(), view.details.rows()
    # a real click on another box of A (zoom of the first view or more) selects its match in B
    qtbot.waitUntil(lambda: pa.canvas.scene.item_for(f"n:{view.stops[conv_stop].a[0]}") is not None)
    v = pa.canvas.view
    visible = v.visible_scene_rect()
    key = next(k for k in pa.canvas.scene.keys_in_rect(visible.adjusted(40, 40, -40, -40))
               if k.startswith("n:") and int(k[2:]) != view.stops[conv_stop].a[0]
               and view.display.counterparts("a", int(k[2:])))
    nid = int(key[2:])
    centre = v.mapFromScene(pa.canvas.scene.item_for(key).scene_rect().center())
    QTest.mouseClick(v.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    qtbot.waitUntil(lambda: selected_nodes(pa) == {nid})
    partner = set(view.display.counterparts("a", nid))
    qtbot.waitUntil(lambda: selected_nodes(pb) == partner)
    # linked: panning A (the pane the user works in) moves B through the nearest pair
    QTest.mousePress(v.viewport(), Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(v.viewport(), Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, centre)
    assert view.sync.driver == "a"
    v.verticalScrollBar().setValue(v.verticalScrollBar().value() + 120)
    near_a, near_b = _nearest_pair(view)
    ca, cb = v.visible_scene_rect().center(), pb.canvas.view.visible_scene_rect().center()
    assert ((ca - near_a) - (cb - near_b)).manhattanLength() < 4.0, (ca - near_a, cb - near_b)
    assert abs(pb.canvas.view.zoom() - v.zoom()) < 1e-6


def _nearest_pair(view) -> tuple[QPointF, QPointF]:  # noqa: ANN001
    """Centres of the paired node nearest the middle of A's view, and of its counterpart."""
    sa, sb = view.panes["a"].tab.canvas.scene, view.panes["b"].tab.canvas.scene
    centre = view.panes["a"].tab.canvas.view.visible_scene_rect().center()
    best = None
    for key in sa.keys_in_rect(view.panes["a"].tab.canvas.view.visible_scene_rect()):
        if not key.startswith("n:"):
            continue
        partners = [p for p in view.display.counterparts("a", int(key[2:])) if sb.item_for(f"n:{p}")]
        if not partners:
            continue
        here = sa.item_for(key).scene_rect().center()
        d = (here.x() - centre.x()) ** 2 + (here.y() - centre.y()) ** 2
        if best is None or d < best[0]:
            best = (d, here, sb.item_for(f"n:{partners[0]}").scene_rect().center())
    assert best is not None
    return best[1], best[2]


@pytest.mark.timeout(180)
def test_quantized_pairs_groups_open_together_and_weights_read_back(qtbot, window, quantized_magika) -> None:  # noqa: ANN001
    view = open_view(qtbot, window, MAGIKA, quantized_magika["qoperator"])
    pa, pb = view.panes["a"].tab, view.panes["b"].tab
    covered, total = view.display.coverage()
    assert covered >= 0.9 * total, (covered, total)
    matmul = next(n for n in pa.doc.main.node_ids if pa.doc.node(n).op_type == "MatMul")
    assert view.display.status_a[matmul] == REWRITTEN
    pa.selection.select([Target.of_node(pa.doc.index.main, matmul)], "canvas")  # as a click does
    qtbot.waitUntil(lambda: {pb.doc.node(n).op_type for n in selected_nodes(pb)} == {"QLinearMatMul"})
    rows = view.details.rows()
    assert any(r[0] == "largest element-wise difference" for r in rows), rows
    assert any("dequantized" in r[2] for r in rows), rows
    # a group opened in A opens its counterpart in B (names differ: the quantizer's tree)
    expanded_b = pb.canvas.controller.expanded()
    key, there = next((k, view.sync.counterpart_group("a", k[2:])) for k in pa.canvas.scene.node_items()
                      if k.startswith("g:") and view.sync.counterpart_group("a", k[2:]) not in (None, *expanded_b))
    pa.canvas.view.groupToggled.emit(key)  # what a double-click on the group box does
    qtbot.waitUntil(lambda: there in pb.canvas.controller.expanded())
    qtbot.waitUntil(lambda: not pa.canvas.scene.item_for(key))
    pa.canvas.view.groupToggled.emit(f"g:{key[2:]}")  # and closed again
    qtbot.waitUntil(lambda: there not in pb.canvas.controller.expanded())
    # stacked and back
    view.set_stacked(True)
    assert view.split.orientation() == Qt.Orientation.Vertical
    view.set_stacked(False)


def test_cancel_while_opening_closes_the_tab(qtbot, window) -> None:  # noqa: ANN001
    view = open_diff_view(window, side_of_path(CLS), side_of_path(MAGIKA))
    assert window.tabs.count() == 1 and view.busy_page.isVisible()
    QTest.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert window.tabs.count() == 0 and window.stack.currentWidget() is window.start_page
    assert view.task.wait(30), "the worker stops after a cancel"


@pytest.mark.timeout(120)
def test_what_did_i_change_diffs_the_open_document_against_its_file(qtbot, window) -> None:  # noqa: ANN001
    from editor.commands import SetAttribute

    tab = open_model(qtbot, window, CLS)
    conv = next(n for n in tab.doc.main.node_ids if tab.doc.node(n).op_type == "Conv")
    tab.doc.execute(SetAttribute(conv, "dilations", [2, 2]))
    window.registry.action("diff.what_changed").trigger()
    view = window.tabs.currentWidget()
    qtbot.waitUntil(lambda: view.is_ready, timeout=LOAD_TIMEOUT_MS)
    assert view.side_a.name.endswith("(on disk)") and view.side_b.name.endswith("(edited)")
    assert [(s.kind, s.details[-1].what) for s in view.stops] == [(CHANGED, "attribute dilations")]
    assert window.registry.action("diff.next_change").isEnabled()
    window.tabs.setCurrentWidget(tab)
    assert not window.registry.action("diff.next_change").isEnabled()
    window.close_tab(window.tabs.indexOf(view))
    assert tab.doc.store is None or not getattr(tab.doc.store, "closed", False), "the tab's store is borrowed"


@pytest.mark.timeout(180)
def test_errors_of_compare_runs_in_both_panes(qtbot, window, tmp_path) -> None:  # noqa: ANN001
    import numpy as np
    import onnx
    from onnx import numpy_helper

    from editor.debug import RunSpec, compare_runs

    vad = CLS.parent / "fw_silero_vad_v6.onnx"
    model = onnx.load(vad)
    t = next(t for t in model.graph.initializer if t.name == "encoder.conv_layers.2.weight")
    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) + np.float32(0.3), t.name))
    b = tmp_path / "vad_b.onnx"
    onnx.save(model, b)
    comparison = compare_runs(RunSpec(vad), RunSpec(b), dims={"seq_len": 4})
    view = open_view(qtbot, window, vad, b)
    assert not view.show_errors(True) and not view.errors.isChecked(), "no Compare Runs yet: nothing to show"
    view.comparison_source = lambda: comparison
    view.errors.setChecked(True)
    pa, pb = view.panes["a"], view.panes["b"]
    assert pa.errors.visible and pb.errors.visible and not pa.colours.visible
    conv_a = pa.doc.producer(pa.doc.index.main, "/encoder/conv_layers.2/Conv_output_0")
    assert pa.errors._shares[conv_a][2] is True, "the first divergence is outlined in A"
    conv_b = view.display.counterparts("a", conv_a)[0]
    assert pb.errors._shares[conv_b][2] is True, "and at its counterpart in B"
    view.errors.setChecked(False)
    assert pa.colours.visible and not pa.errors.visible


@pytest.mark.timeout(120)
def test_diff_render_draws_both_sides_numbered_and_linked(qtbot, planted, tmp_path, quantized_magika) -> None:  # noqa: ANN001
    from widgets.cli import main

    path, edit = planted
    out = tmp_path / "diff.svg"
    assert main(["diff", str(CLS), str(path), "--render", str(out)]) == 1  # 1: the models differ
    root = ET.parse(out).getroot()
    sides = {s.get("id"): s for s in root.findall(f"{SVG}svg")}
    assert set(sides) == {"side-a", "side-b"}
    marked = {}
    for tag, side in sides.items():
        cells = side.findall(f".//{SVG}g[@class='diff']/{SVG}rect")
        marked[tag] = Counter(c.get("data-status") for c in cells if c.get("data-status") != SAME)
        texts = {t.text for t in side.iter(f"{SVG}text")}
        assert "Conv" in texts, "the side is the canvas's own drawing, labels as text"
    assert marked == {"side-a": Counter({CHANGED: 2, REMOVED: 1}), "side-b": Counter({CHANGED: 2})}, marked
    links = root.findall(f".//{SVG}g[@id='links']/{SVG}path")
    assert sorted(int(p.get("data-stop")) for p in links) == [1, 2, 3]
    badges_a = {g.get("data-stop") for g in root.iter(f"{SVG}g") if g.get("class") == "badge-a"}
    badges_b = {g.get("data-stop") for g in root.iter(f"{SVG}g") if g.get("class") == "badge-b"}
    assert badges_a == {"1", "2", "3"} and badges_b == {"1", "2", "3"}, (badges_a, badges_b)
    legend = " ".join(t.text for t in root.find(f"{SVG}g[@id='legend']").iter(f"{SVG}text"))
    assert "changed 2 / 2" in legend and "removed 1" in legend, legend
    png = tmp_path / "diff.png"  # the PNG on a smaller pair: Magika and its int4 MatMulNBits
    assert main(["diff", str(MAGIKA), str(quantized_magika["int4"]), "--render", str(png), "--json"]) == 1
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert image.width() > 500 and image.height() > 500, (image.width(), image.height())


@pytest.mark.timeout(120)
def test_bodies_open_in_both_panes_together(qtbot, window, tmp_path) -> None:  # noqa: ANN001
    from editor.commands import SetNodeField
    from editor.document import Document

    vad = CLS.parent / "silero_vad_16k_op15.onnx"
    doc = Document.open(vad)
    owner = next(n for n in doc.main.node_ids if doc.index.children.get(n))
    inner = next(n for n in doc.scope(doc.index.children[owner][0]).node_ids if doc.node(n).op_type != "Constant")
    doc.execute(SetNodeField(inner, "name", "renamed_in_body"))
    b = tmp_path / "vad_b.onnx"
    doc.save(b)
    view = open_view(qtbot, window, vad, b)
    pa, pb = view.panes["a"].tab, view.panes["b"].tab
    assert view.display.status_a[inner] == CHANGED and view.display.status_a[owner] == CHANGED
    partner = view.display.counterparts("a", owner)[0]
    qtbot.waitUntil(lambda: pa.canvas.scene.item_for(f"n:{owner}") is not None)
    pa.canvas.activated.emit(f"n:{owner}")  # what a double-click on the If box does
    qtbot.waitUntil(lambda: pa.canvas.controller.body_expanded(owner))
    qtbot.waitUntil(lambda: pb.canvas.controller.body_expanded(partner))
    # the change inside the body is a stop of its own, shown in both panes
    k = view.display.stop_of("a", inner)
    view.go_to(k)
    qtbot.waitUntil(lambda: selected_nodes(pb) == set(view.stops[k].b))
