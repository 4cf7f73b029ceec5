"""Box texts are laid out while the window is idle, before the view comes to them, and a
warmed box paints exactly as a cold one."""

from __future__ import annotations

import onnx
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from tests.conftest import CORPUS
from widgets.canvas import text_warmer
from widgets.canvas.style import TEXT_LOD
from widgets.canvas.widget import CanvasWidget

MODEL = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"


def _canvas(qtbot) -> CanvasWidget:
    graph = onnx.load(str(MODEL), load_external_data=False).graph
    w = CanvasWidget()
    qtbot.addWidget(w)
    w.resize(900, 700)
    w.show()
    qtbot.waitExposed(w)
    w.set_source(graph, list(range(len(graph.node))), opsets={"": 13}, expanded="auto", sync=True)
    w.view.set_zoom(1.0)
    return w


def _idle(qtbot, w: CanvasWidget) -> None:
    qtbot.waitUntil(lambda: w.text_warmer._queue is None and not w.text_warmer._timer.isActive(), timeout=20000)


def _draw(w: CanvasWidget, rect: QRectF) -> QImage:
    image = QImage(600, 400, QImage.Format.Format_ARGB32)
    image.fill(0)
    p = QPainter(image)
    w.scene.render(p, QRectF(0, 0, 600, 400), rect)
    p.end()
    return image


def test_every_box_is_warmed_before_it_is_shown(qtbot) -> None:
    w = _canvas(qtbot)
    items = w.scene.node_items()
    assert len(items) > 100
    _idle(qtbot, w)
    assert w.text_warmer.warmed >= len(items)
    # nothing is left for a paint to lay out at this zoom
    scale = w.text_warmer._scale
    assert not any(item.warm_text(scale) for item in items.values())
    # a zoom makes the glyph layouts stale: warmed again at the new scale
    before = w.text_warmer.warmed
    w.view.set_zoom(1.5)
    _idle(qtbot, w)
    assert w.text_warmer.warmed - before >= len(items)


def test_nothing_is_warmed_where_boxes_show_no_text(qtbot) -> None:
    w = _canvas(qtbot)
    _idle(qtbot, w)
    w.view.set_zoom(TEXT_LOD / 2)
    before = w.text_warmer.warmed
    for item in w.scene.node_items().values():
        item._texts = None
    _idle(qtbot, w)
    assert w.text_warmer.warmed == before
    assert all(item._texts is None for item in w.scene.node_items().values())


def test_a_warmed_box_paints_as_a_cold_one(qtbot) -> None:
    w = _canvas(qtbot)
    _idle(qtbot, w)
    rect = w.scene.graph_rect()
    part = QRectF(rect.left(), rect.top(), 600, 400)
    warm = _draw(w, part)
    for item in w.scene.node_items().values():
        item._texts, item._warmed = None, None
    assert _draw(w, part) == warm


def test_a_renamed_box_is_laid_out_again(qtbot) -> None:
    w = _canvas(qtbot)
    _idle(qtbot, w)
    item = next(i for i in w.scene.node_items().values() if i.box.kind == "node")
    old = item._texts
    item.set_box(item.box)
    assert item._texts is None
    assert item.warm_text(w.text_warmer._scale)
    assert item._texts is not None and item._texts is not old


def test_big_graphs_are_warmed_around_the_view_only(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(text_warmer, "WARM_ALL", 10)
    w = _canvas(qtbot)
    w.view.set_zoom(1.0)
    w.text_warmer.restart()
    _idle(qtbot, w)
    items = w.scene.node_items()
    rect = w.view.visible_scene_rect()
    near = set(w.scene.keys_in_rect(rect.adjusted(-rect.width(), -rect.height(), rect.width(), rect.height())))
    assert near and near != set(items)
    warm = {k for k, i in items.items() if i._warmed is not None and i._warmed[1] == w.text_warmer._scale}
    assert near <= warm
    assert warm != set(items)
