"""Canvas: open groups as frames, repeated blocks, edge clicks, the display-filter hook and
a layout runner that outlives nothing it reports to.

Offscreen (QT_QPA_PLATFORM=offscreen); pictures are rendered to images and probed.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import widgets.canvas  # noqa: E402,F401
from PySide6.QtCore import QObject, QPointF, QRectF, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402

from editor.layout import layout_graph  # noqa: E402
from editor.viewmodel import build_display_graph  # noqa: E402
from widgets.canvas.controller import GraphController  # noqa: E402
from widgets.canvas.export import export_graph_svg, export_svg  # noqa: E402
from widgets.canvas.frames import FRAME_TITLE  # noqa: E402
from widgets.canvas.items import box_text_layout  # noqa: E402
from widgets.canvas.runner import LayoutRunner  # noqa: E402
from widgets.canvas.scene import GraphScene  # noqa: E402
from widgets.canvas.view import GraphView  # noqa: E402
from widgets.canvas.widget import CanvasWidget  # noqa: E402
from tests.widgets.canvas_support import render_scene


def _model() -> onnx.ModelProto:
    """Two identical blocks /layers.0 and /layers.1 and a /head block, chained."""
    nodes = []
    prev = "x"
    for i in range(2):
        nodes += [
            helper.make_node("Relu", [prev], [f"r{i}"], name=f"/layers.{i}/Relu"),
            helper.make_node("Sigmoid", [f"r{i}"], [f"s{i}"], name=f"/layers.{i}/Sigmoid"),
            helper.make_node("Mul", [f"r{i}", f"s{i}"], [f"m{i}"], name=f"/layers.{i}/Mul"),
        ]
        prev = f"m{i}"
    nodes += [
        helper.make_node("Tanh", [prev], ["t"], name="/head/Tanh"),
        helper.make_node("Abs", ["t"], ["y"], name="/head/Abs"),
    ]
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 8])
          for n in ("r0", "s0", "m0", "r1", "s1", "m1", "t")]
    graph = helper.make_graph(nodes, "blocks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], value_info=vi)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _display(model, expanded):
    g = model.graph
    vi = {v.name: v for v in list(g.value_info) + list(g.input) + list(g.output)}
    return build_display_graph(g, list(range(len(g.node))), opsets={"": 17}, value_info=vi, expanded=expanded)


def _scene(qtbot, expanded, model=None):
    display = _display(model or _model(), expanded)
    scene = GraphScene()
    scene.set_graph(display, layout_graph(display))
    view = GraphView(scene)
    qtbot.addWidget(view)
    view.resize(900, 700)
    return scene, view


_render = render_scene


def _px(image, rect, scale, x, y) -> QColor:
    return image.pixelColor(int((x - rect.x()) * scale), int((y - rect.y()) * scale))


def _empty_point_in(scene: GraphScene, r: QRectF) -> QPointF:
    """A point inside ``r`` (below its title band) with no box and no edge near it."""
    step = 6.0
    y = r.top() + FRAME_TITLE + 4.0
    while y < r.bottom() - 4.0:
        x = r.left() + 4.0
        while x < r.right() - 4.0:
            p = QPointF(x, y)
            if scene.key_at(p) is None and scene.edge_at(p, 8.0) is None:
                return p
            x += step
        y += step
    raise AssertionError("no empty point inside the frame")


# ------------------------------------------------------------------ frames

def test_open_groups_are_drawn_as_tinted_frames_with_a_title(qtbot):
    scene, _ = _scene(qtbot, expanded={"/layers.0", "/head"})
    frames = {f.path: f for f in scene.frames()}
    assert set(frames) == {"/layers.0", "/head"}
    assert frames["/head"].title == "head"
    # every member box lies inside its frame, below the title band
    layout = scene.layout_result
    for key, group in scene.graph.box_groups.items():
        f = frames[group]
        x, y = layout.positions[key]
        assert f.x <= x and y >= f.y + FRAME_TITLE and x <= f.x + f.w
    # the graph rectangle covers the frames (fit and export show them whole)
    for f in frames.values():
        assert scene.graph_rect().contains(f.rect())
    image, rect = _render(scene, 1.0)
    bg = scene.palette_.background
    inside = _empty_point_in(scene, frames["/head"].rect())
    tint = _px(image, rect, 1.0, inside.x(), inside.y())
    assert tint != bg, "the frame's inside is tinted"
    band = frames["/head"].title_rect()
    band_px = _px(image, rect, 1.0, band.center().x(), band.top() + 3)
    assert band_px != tint and band_px != bg, "the title band is a shade of its own"


def test_frames_are_cheap_outlines_at_low_zoom(qtbot):
    scene, _ = _scene(qtbot, expanded={"/layers.0", "/head"})
    item = scene._frame_item
    assert item is not None and item.zValue() < 0  # below edges and boxes
    # one item for all frames, whatever their number
    assert sum(1 for it in scene.items() if type(it).__name__ == "FrameLayerItem") == 1
    image, rect = _render(scene, 0.1)  # renders without text, still shows the frame
    f = scene.frames()[0]
    edge_pixels = [_px(image, rect, 0.1, f.x + f.w / 2, f.y + dy) for dy in (0.0, 5.0, 10.0)]
    assert any(c != scene.palette_.background for c in edge_pixels)


def test_clicking_a_frame_title_collapses_the_group(qtbot):
    canvas = CanvasWidget()
    qtbot.addWidget(canvas)
    canvas.resize(1000, 800)
    canvas.show()
    qtbot.waitExposed(canvas)
    model = _model()
    g = model.graph
    canvas.set_source(g, list(range(len(g.node))), opsets={"": 17}, expanded={"/head"}, sync=True)
    canvas.view.zoom_to_fit()
    f = next(f for f in canvas.scene.frames() if f.path == "/head")
    pos = canvas.view.mapFromScene(QPointF(f.x + 30.0, f.y + FRAME_TITLE / 2))
    assert "click to collapse" in canvas.view.tooltip_at(pos)
    qtbot.mouseMove(canvas.view.viewport(), pos)
    qtbot.waitUntil(lambda: canvas.view.viewport().cursor().shape() == Qt.CursorShape.PointingHandCursor,
                    timeout=10_000)  # a loaded 2-core CI box can take seconds to deliver the hover
    with qtbot.waitSignal(canvas.view.groupToggled) as blocker:
        qtbot.mouseClick(canvas.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["g:/head"]
    qtbot.waitUntil(lambda: "/head" not in (canvas.controller.expanded() or set()), timeout=10_000)
    qtbot.waitUntil(lambda: canvas.scene.item_for("g:/head") is not None, timeout=10_000)
    assert not canvas.scene.frames()


def test_frames_in_svg_export(qtbot, tmp_path):
    scene, _ = _scene(qtbot, expanded={"/head"})
    out = tmp_path / "g.svg"
    export_svg(scene, out)
    text = out.read_text(encoding="utf-8")
    assert '<g id="frames">' in text and ">head</text>" in text
    display = scene.graph
    out2 = tmp_path / "h.svg"
    export_graph_svg(display, scene.layout_result, out2)  # the render CLI's path
    text2 = out2.read_text(encoding="utf-8")
    assert '<g id="frames">' in text2
    # the frame's top (title band) is inside the SVG's view box
    import re

    vx, vy, vw, vh = map(float, re.search(r'viewBox="([^"]+)"', text2).group(1).split())
    f = scene.frames()[0]
    assert vy <= f.y and vy + vh >= f.y + f.h


# ------------------------------------------------------------------ repeated blocks

def test_identical_collapsed_groups_say_so(qtbot):
    scene, view = _scene(qtbot, expanded=set())
    assert scene.graph.repeats, "the two layers are structurally identical"
    item = scene.item_for("g:/layers.0")
    assert item.repeats == ("/layers.0", "/layers.1")
    assert "same structure as layers.1" in item.tooltip()
    texts = [t for _, t, _, _ in box_text_layout(item.box, scene.style, repeat=len(item.repeats))]
    # the badge says what it means (it said "×2", which a newcomer cannot read)
    assert any("2 identical blocks" in t for t in texts), texts
    # a unique group says nothing of the kind
    head = scene.item_for("g:/head")
    assert head.repeats == () and "same structure" not in head.tooltip()


# ------------------------------------------------------------------ edge hit-testing

def _edge_point(scene: GraphScene, value: str) -> QPointF:
    """Middle of the longest segment of an edge carrying ``value``."""
    geo = scene.edge_geometry()
    best = None
    for edge, route, _ in geo.routed:
        if edge.value != value:
            continue
        for (x0, y0), (x1, y1) in zip(route, route[1:]):
            d = abs(x1 - x0) + abs(y1 - y0)
            if best is None or d > best[0]:
                best = (d, QPointF((x0 + x1) / 2, (y0 + y1) / 2))
    assert best is not None, value
    return best[1]


def test_edge_at_finds_the_edge_near_a_point(qtbot):
    scene, _ = _scene(qtbot, expanded=None)
    p = _edge_point(scene, "t")
    edge = scene.edge_at(p + QPointF(2.0, 0.0), 4.0)
    assert edge is not None and edge.value == "t"
    assert scene.edge_at(QPointF(-5000.0, -5000.0), 4.0) is None


def test_clicking_an_edge_selects_its_value_and_hover_tells_its_shape(qtbot):
    scene, view = _scene(qtbot, expanded=None)
    view.show()
    qtbot.waitExposed(view)
    view.zoom_to_fit()
    relu = next(k for k, it in scene.node_items().items() if it.box.label == "Relu")
    scene.select_keys([relu])
    p = _edge_point(scene, "t")
    pos = view.mapFromScene(p)
    tip = view.tooltip_at(pos)
    assert "<b>t</b>" in tip and "1x8" in tip
    with qtbot.waitSignal(view.valueClicked) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["t"]
    assert scene.selected_value() == "t" and scene.selected_keys() == []
    # the value's edge is drawn in the highlight (path) colour
    image, rect = _render(scene, 1.0)
    colour = scene.palette_.path
    c = _px(image, rect, 1.0, p.x(), p.y())
    near = [image.pixelColor(int(p.x() - rect.x()) + dx, int(p.y() - rect.y()) + dy)
            for dx in range(-2, 3) for dy in range(-2, 3)]
    assert any(abs(q.red() - colour.red()) + abs(q.green() - colour.green()) + abs(q.blue() - colour.blue()) < 60
               for q in near + [c])
    # selecting a box again drops the value
    scene.select_keys([relu])
    assert scene.selected_value() is None


def test_click_on_background_is_not_an_edge_click(qtbot):
    scene, view = _scene(qtbot, expanded=None)
    view.show()
    qtbot.waitExposed(view)
    view.zoom_to_fit()
    clicked = []
    view.valueClicked.connect(clicked.append)
    r = scene.graph_rect()
    pos = view.mapFromScene(QPointF(r.left() - 60, r.top() - 60))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert clicked == [] and scene.selected_value() is None


def test_edge_click_selects_the_value_in_the_app(qtbot, window):
    from resources import sample_model_path
    from tests.widgets.conftest import open_model
    from widgets.common.selection import Target

    tab = open_model(qtbot, window, sample_model_path())
    scene = tab.canvas.scene
    edge = scene.edge_geometry().routed[0][0]
    scene.click_value(edge.value)
    assert tab.selection.targets == (Target.of_value(tab.scope_id, edge.value),)
    assert scene.selected_value() == edge.value
    # the properties panel follows the shared selection
    qtbot.waitUntil(lambda: window.properties.rows().get("Value/Name") == edge.value, timeout=10_000)


# ------------------------------------------------------------------ display filter hook

def test_display_filter_hook_applies_to_every_build(qtbot):
    model = _model()
    g = model.graph
    scene = GraphScene()
    controller = GraphController(scene)
    seen = []

    def drop_labels(display):
        from dataclasses import replace

        seen.append(display)
        return replace(display, edges=tuple(replace(e, label="") for e in display.edges))

    controller.set_display_filter(drop_labels)
    controller.set_source(g, list(range(len(g.node))), opsets={"": 17}, expanded=None, sync=True)
    assert seen and all(not e.label for e in scene.graph.edges)
    controller.set_display_filter(None)
    controller.relayout(sync=True)
    assert any(e.label == "1x8" for e in scene.graph.edges)  # unfiltered: shapes are back
    try:
        controller.set_display_filter(42)  # type: ignore[arg-type]
    except TypeError as exc:
        assert "42" in str(exc)
    else:
        raise AssertionError("a non-callable filter is refused")


def test_app_uses_the_filter_hook_not_a_wrapper(qtbot, window):
    from resources import sample_model_path
    from tests.widgets.conftest import open_model
    from widgets.view.display_options import DisplayOptions

    tab = open_model(qtbot, window, sample_model_path())
    controller = tab.canvas.controller
    assert "build_display_graph" not in vars(controller), "no per-instance wrapper"
    assert controller.display_filter() is not None
    with qtbot.waitSignal(controller.laidOut, timeout=30_000):
        tab.set_options(DisplayOptions(attributes=False, shapes=False, initializers=False))
    boxes = [b for b in tab.canvas.scene.graph.boxes if b.kind == "node"]
    assert boxes and all(not b.details and not b.weights for b in boxes)
    assert all(not e.label for e in tab.canvas.scene.graph.edges)


# ------------------------------------------------------------------ runner lifetime

def test_runner_deleted_while_a_layout_runs_reports_nothing(qtbot, capfd, monkeypatch):
    import shiboken6

    import editor.layout as layout_mod

    started = []

    def slow_layout(graph, *, previous=None, progress=None, cancel=None, wrap=False):
        started.append(True)
        for i in range(40):
            time.sleep(0.01)
            if progress is not None:
                progress(i / 40)  # emits through the (soon deleted) runner
        return layout_graph(graph)

    monkeypatch.setattr(layout_mod, "layout_graph", slow_layout)
    owner = QObject()
    runner = LayoutRunner(owner)
    results = []
    runner.finished.connect(lambda *a: results.append(a))
    runner.start(_display(_model(), None))
    qtbot.waitUntil(lambda: bool(started), timeout=5000)
    shiboken6.delete(owner)  # the tab closes: runner and relay are gone
    assert not shiboken6.isValid(runner)
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(10_000)
    qtbot.wait(50)
    err = capfd.readouterr().err
    assert "RuntimeError" not in err and "Signal source has been deleted" not in err
    assert results == []


def test_runner_shutdown_stops_delivery(qtbot):
    runner = LayoutRunner()
    got = []
    runner.finished.connect(lambda *a: got.append(a))
    runner.shutdown()
    runner.start(_display(_model(), None))  # a late request (pending rebuild): dropped quietly
    runner.wait(5000)
    qtbot.wait(50)
    assert got == [] and not runner.is_running()


def test_minimap_shows_open_group_frames(qtbot):
    from widgets.canvas.minimap import Minimap

    scene, view = _scene(qtbot, expanded={"/head"})
    minimap = Minimap(view, view)
    minimap._render()
    image = minimap._pixmap.toImage()
    f = next(f for f in scene.frames() if f.path == "/head")
    p = minimap._map.map(_empty_point_in(scene, f.rect()))
    outside = minimap._map.map(QPointF(f.x - 40.0, f.y + f.h / 2))
    assert image.pixelColor(int(p.x()), int(p.y())) != image.pixelColor(int(outside.x()), int(outside.y()))
