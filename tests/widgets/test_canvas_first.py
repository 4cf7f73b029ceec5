"""Canvas first (issue 29): at first start the canvas gets at least 70% of a 1,600 x 1,000
window (it had 45%); empty panels take no room and show a count on their tab when they
have something to say; F11 shows the canvas alone and brings the panels back; the minimap
never covers a box."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDockWidget

from resources import sample_model_path
from tests.widgets.conftest import open_model
from tests.widgets.test_edit_support import SQUEEZENET, first_node, install, open_copy


@pytest.fixture
def first_start(qtbot, window):
    """The window at 1,600 x 1,000 with no saved layout, after its first-start layout."""
    from widgets.docking import first_start_layout

    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: window.width() == 1600)
    first_start_layout(window)  # what the event loop runs after the first show
    QApplication.processEvents()
    return window


def test_the_canvas_gets_most_of_the_window_at_first_start(qtbot, first_start):
    window = first_start
    tab = open_model(qtbot, window, sample_model_path())
    canvas = tab.canvas
    share = canvas.width() * canvas.height() / (window.width() * window.height())
    assert share >= 0.70, f"the canvas has {share:.0%} of the window ({canvas.width()} x {canvas.height()})"
    elsewhere = [d.objectName() for d in window.findChildren(QDockWidget)
                 if not d.isHidden() and window.dockWidgetArea(d) != Qt.DockWidgetArea.RightDockWidgetArea]
    assert elsewhere == [], f"open beside or under the canvas at first start: {elsewhere}"
    # Ctrl+F still finds: the Find panel opens, in a column wide enough to read (it opened
    # at 137 pixels, the Outline's section names cut to "Ou…ts"), once: a column the user
    # narrows afterwards stays narrow
    from widgets.docking.canvas_first import LEFT_WIDTH

    window.show_find()
    assert window.find_dock.isVisible()
    qtbot.waitUntil(lambda: window.find_dock.width() >= LEFT_WIDTH - 10, timeout=5000)
    window.resizeDocks([window.find_dock], [LEFT_WIDTH // 2], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: window.find_dock.width() < LEFT_WIDTH - 40)
    # View ▸ Panels ▸ Outline: shown in front of Find (it opened behind Find's tab)
    from widgets.common.seen import is_seen

    window.registry.action("view.panel.outline").trigger()
    qtbot.waitUntil(lambda: is_seen(window.outline), timeout=5000)
    assert window.outline_dock.width() < LEFT_WIDTH - 40, "the column was widened again"


def test_empty_panels_wait_behind_a_tab_and_problems_count(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    history = editing.history_dock
    assert window.tabifiedDockWidgets(window.properties_dock).count(history), "History joins the Properties tabs"
    assert history.windowTitle() == "History", history.windowTitle()
    # History's title stays as it is through edits: a dock title that changes relayouts
    # every dock of the window, on every edit
    editing.rename_node(first_node(tab.doc, "Conv"), "renamed")
    assert history.windowTitle() == "History", history.windowTitle()
    tab.doc.undo()
    assert history.windowTitle() == "History"
    # problems: none, no button; an error, a button that opens the Problems panel
    button = window.problems_button
    window.problems_dock.hide()
    assert button.isHidden()
    assert editing.disconnect_input(first_node(tab.doc, "Softmax"), 0)
    qtbot.waitUntil(lambda: not button.isHidden(), timeout=10_000)
    assert "error" in button.text() and window.problems_dock.windowTitle().startswith("Problems (")
    button.click()
    assert window.problems_dock.isVisible()


def test_focus_mode_shows_the_canvas_alone_and_brings_the_panels_back(qtbot, window):
    open_model(qtbot, window, sample_model_path())
    action = window.registry.action("view.focus_canvas")
    assert action.shortcut().toString() == "F11" and action in window.registry.menu("View").actions()

    def shown() -> list[tuple[str, tuple[int, int, int, int]]]:
        QApplication.processEvents()
        return sorted((d.objectName(), d.geometry().getRect()) for d in window.findChildren(QDockWidget)
                      if d.isVisible())

    before = shown()
    assert before
    action.trigger()
    assert shown() == []
    assert action.isChecked()
    action.trigger()
    # the same panels in front, at the same sizes (Summary came to the front of Properties'
    # tab group, and the column's split moved)
    assert shown() == before and not action.isChecked()


def _wide_model(branches: int = 30, depth: int = 14):
    """One input feeding ``branches`` chains of ``depth`` ops side by side: wider and taller
    than the view, boxes everywhere on screen."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    nodes, outs = [], []
    ops = ("Relu", "Sigmoid", "Neg", "Abs")
    for b in range(branches):
        prev = "x"
        for d in range(depth):
            out = f"v{b}_{d}"
            nodes.append(helper.make_node(ops[d % len(ops)], [prev], [out], name=f"n{b}_{d}"))
            prev = out
        outs.append(helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 8]))
    return helper.make_model(helper.make_graph(nodes, "wide", [x], outs), opset_imports=[helper.make_opsetid("", 17)])


def test_the_minimap_never_covers_a_box(qtbot, window, tmp_path):
    import onnx

    path = tmp_path / "wide.onnx"
    onnx.save(_wide_model(), path)
    window.resize(1280, 800)
    tab = open_model(qtbot, window, path)
    canvas, view = tab.canvas, tab.canvas.view
    view.set_zoom(1.0)
    graph = canvas.scene.graph_rect()
    seen_gutter = False
    for fx in (0.0, 0.25, 0.5, 0.75, 1.0):
        for fy in (0.0, 0.5, 1.0):
            view.centerOn(graph.left() + fx * graph.width(), graph.top() + fy * graph.height())
            QApplication.processEvents()
            # the graph overflows the view: the minimap is there, and covers no box
            assert canvas.minimap.isVisible(), f"no minimap at ({fx}, {fy})"
            where = canvas.minimap.geometry()
            if canvas.minimap_in_gutter():
                seen_gutter = True
                assert not where.intersects(view.viewport().geometry()), (where, view.viewport().geometry())
                continue
            covered = canvas._covered(where)
            assert covered == 0, f"the minimap covers {covered} boxes at ({fx}, {fy})"
    # somewhere every corner of the view holds a box: the minimap steps aside into a strip
    # of its own beside the viewport (and stays there: the picture does not jump while panning)
    assert seen_gutter, "every corner held a box somewhere: the minimap should have moved beside the view"
    # making or giving back the strip keeps the picture where it is (no jump under the
    # pointer; at the scroll range's end the view cannot but show more of the left)
    view.centerOn(graph.center())
    for on in (False, True):
        before = view.mapToScene(view.viewport().rect().topLeft())
        canvas._set_gutter(on)
        QApplication.processEvents()
        after = view.mapToScene(view.viewport().rect().topLeft())
        assert (after - before).manhattanLength() < 1.0 / view.transform().m11(), (before, after)
    # Zoom to Fit: the graph fits, the strip goes
    view.zoom_to_fit()
    QApplication.processEvents()
    assert not canvas.minimap_in_gutter() and not canvas.minimap.isVisible()


@pytest.mark.parametrize("saved", [False, True])
def test_no_bottom_or_left_tab_bar_is_drawn_before_the_first_start_layout(qtbot, qapp, settings_dir, saved):
    """The first frames showed a stray "Problems | Run" tab bar under the canvas (and
    "Outline | Find" on the left) until the first-start layout ran from the event loop; a
    saved layout with those docks closed kept Qt's stale copy of the first tab bar."""
    from PySide6.QtWidgets import QTabBar

    from widgets.settings.store import Settings
    from widgets.window.main_window import MainWindow

    if saved:  # a layout saved by a window whose bottom and left docks were closed
        first = MainWindow(settings=Settings(), theme=None, sample=None)
        qtbot.addWidget(first)
        first.resize(1600, 1000)
        first.show()
        QApplication.processEvents()
        Settings().save_window_state(first.saveGeometry(), first.saveState())
        first.close()
    win = MainWindow(settings=Settings(), theme=None, sample=None)
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()  # laid out; the first-start layout (a queued call) not run yet: the first frame
    def shown() -> set[tuple[str, ...]]:
        return {tuple(bar.tabText(i) for i in range(bar.count())) for bar in win.findChildren(QTabBar)
                if bar.isVisible() and bar.count() and win.rect().intersects(bar.geometry()) and bar.parent() is win}

    stray = {tabs for tabs in shown() if set(tabs) & {"Problems", "Run", "Outline", "Find"}}
    assert not stray, f"tab bars under the canvas or on the left in the first frame: {stray}"
    # and when the Run dock opens, its tab bar is there again
    QApplication.processEvents()
    win.run_dock.show()
    win.problems_dock.show()
    QApplication.processEvents()
    assert any({"Problems", "Run"} <= set(tabs) for tabs in shown()), shown()
