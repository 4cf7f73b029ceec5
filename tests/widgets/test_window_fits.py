"""No widget can widen the window (issue 29): one Run dock status line once made the main
window 2,510 pixels wide on a 1,600-pixel screen. The longest real texts go into every dock
(status lines, banners, headings, tab titles) with every dock open, and the window must
still fit 1,280 x 800; long status lines are cut with "…", the whole text on hover and in a
details window; messages are plain text (the dock once showed `&#x27;` literally)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QDockWidget

from editor.runtime.result import Attempt, RunResult
from resources import sample_model_path
from tests.widgets.conftest import open_model

LONG_PATH = "/home/user/models/" + "very_long_folder_name_" * 8 + "minilm_l6_v2_int8w.onnx"
#: the status line that widened the window, as the Run dock printed it (issue 29)
RUN_STATUS_PARTS = [
    ("Ran on onnxruntime", "strong"), "CPU", "43.7 ms",
    ("onnxruntime: " + "CUDA refused: libcudart.so.12: cannot open shared object file; " * 3, "warning"),
    ("387: shape contradicts the model: declared [1,seqlen] (rank 2), got [16,1,8210] (rank 3)", "warning"),
    ("onnxruntime warning: [W:onnxruntime:, graph.cc:4285 CleanUnusedInitializersAndNodeArgs] Removing "
     "initializer '/encoder/layer.0/attention/self/Constant_output_0'. It is not used by any node and should "
     "be removed from the model.", "warning"),
    ("model edited since", "note"),
]
NAME = "/encoder/layer.11/attention/output/LayerNorm/" + "ReduceMean_" * 12 + "output_0"


def _fill_every_dock(window, tab) -> None:
    from widgets.common.status_line import Part

    run = window.run_dock.panel
    run.set_status([Part(*p) if isinstance(p, tuple) else Part(p) for p in RUN_STATUS_PARTS])
    run.show_failure(RunResult(status="failed", error=f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : "
                                                      f"Got invalid dimensions for input: '{NAME}' in {LONG_PATH}"))
    numeric = window.numeric_dock
    numeric.label_a.setText(f"tab: {LONG_PATH}")
    numeric.status.set_parts([f"Reduced 672 nodes to 3 ({NAME}, {NAME})", "14 runs",
                              f"inputs: /tmp/onnx-studio-reduced-{'x' * 80}/reduced_inputs.npz"])
    diff = window.compare_dock.panel
    diff.show_message(f"Cannot compare: {LONG_PATH} is not an ONNX model: {NAME}")
    diff.title.setText(f"<b>{LONG_PATH}</b> &nbsp;↔&nbsp; <b>{LONG_PATH}</b>")
    window.properties.title.setText(f"<b>Value</b> &nbsp;{NAME}")
    window.find_panel.status.setText(f"bad regex: missing ), unterminated subpattern at position 0 in {NAME}")
    window.problems.summary.setText(f"1,204 errors, 3,871 warnings in {LONG_PATH}")
    window.cost.totals.setText(f"<b>Cost unavailable:</b> {NAME} " * 4)
    window.quantize_dock.summary.setText(f"Quantized {LONG_PATH}: int8 QDQ, proof failed at {NAME} " * 2)
    window.generate_dock.status.setText(f"Cannot generate: no tokenizer beside {LONG_PATH} ({NAME})")


def test_the_longest_real_texts_in_every_open_dock_leave_the_window_on_screen(qtbot, window):
    tab = open_model(qtbot, window, sample_model_path())
    window.resize(1280, 800)
    docks = [d for d in window.findChildren(QDockWidget)]
    assert len(docks) >= 11, [d.objectName() for d in docks]
    for dock in docks:  # the user opens every panel from View ▸ Panels
        dock.show()
        dock.raise_()
    _fill_every_dock(window, tab)
    for dock in docks:  # and looks at each in turn (a tabbed dock counts when in front)
        dock.raise_()
        QApplication.processEvents()
        assert window.width() <= 1280 and window.height() <= 800, (
            f"{dock.objectName()}: the window grew to {window.width()} x {window.height()}")
    hint = window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 800, f"the docks ask for {hint.width()} x {hint.height()}"


def test_a_long_status_line_is_cut_with_its_whole_text_on_hover_and_in_details(qtbot, window):
    from widgets.common.status_line import Part

    window.run_dock.show()
    window.run_dock.raise_()
    panel = window.run_dock.panel
    panel.set_status([Part(*p) if isinstance(p, tuple) else Part(p) for p in RUN_STATUS_PARTS])
    qtbot.waitUntil(lambda: panel.status.width() > 0)
    status = panel.status
    assert status.is_cut and status.details_button.isVisible(), "a status longer than its room must be cut"
    assert status.width() < 1280
    full = status.text()
    assert full.startswith("Ran on onnxruntime · CPU · 43.7 ms") and "model edited since" in full, full
    assert status.toolTip() == status.details_text() and "387: shape contradicts" in status.toolTip()
    details = status.show_details()
    qtbot.addWidget(details)
    assert details.isVisible() and details.text_view.toPlainText() == status.details_text()
    assert not details.isModal(), "the details window must not block the editor"
    # a short line fits: no Details button
    panel.set_status([Part("Ran on onnxruntime", "strong"), Part("2.1 ms")])
    assert not status.is_cut, f"{status.width()} px for {status.text()!r}"
    assert not status.is_cut and not status.details_button.isVisible()


def test_messages_are_plain_text(qtbot, window):
    panel = window.run_dock.panel
    panel.show_failure(RunResult(status="failed", error="input 'input_ids' has values out of range <0, 30522>"))
    text = panel.banner.text()
    assert "'input_ids'" in text and "&#x27;" not in text and "<0, 30522>" in text, text
    from PySide6.QtCore import Qt

    assert panel.banner.textFormat() == Qt.TextFormat.PlainText
    # a traceback-long message: a few lines in the dock, the rest behind Details
    trace = "RuntimeError: \n" + "\n".join(f"  File 'worker.py', line {i}, in run" for i in range(40))
    panel.show_failure(RunResult(status="failed", error=trace))
    lines = panel.banner.label.fontMetrics().lineSpacing()
    assert panel.banner.minimumSizeHint().height() <= 6 * lines, (
        f"the banner asks for {panel.banner.minimumSizeHint().height()} px ({lines} px a line)")
    assert not panel.banner.details_button.isHidden() and trace in panel.banner.label.toolTip()
    # the summary names a passed-over backend as written, quotes and all
    result = RunResult(status="ok", backend="reference", attempts=[
        Attempt("ort", "failed", "no kernel for 'DynamicQuantizeLSTM' <com.microsoft>"), Attempt("reference", "ran")])
    assert "no kernel for 'DynamicQuantizeLSTM' <com.microsoft>" in "".join(
        p.text for p in _parts_for(panel, result))


def _parts_for(panel, result):
    class _Controller:  # the panel reads these fields of its controller
        last_result = result
        last_failure = None
        last_feed_shapes: dict = {}
        stale = False
        doc = None

    old = panel.controller
    panel.controller = _Controller()
    panel.truth_lines = lambda: []
    try:
        return panel.summary_parts()
    finally:
        panel.controller = old
        del panel.truth_lines


def test_a_dock_can_be_dragged_down_to_its_tab_bar(qtbot, window):
    from widgets.docking import DockFrame

    tab = open_model(qtbot, window, sample_model_path())
    assert tab is not None
    window.run_dock.show()
    window.run_dock.raise_()
    for dock in window.findChildren(QDockWidget):
        assert isinstance(dock.widget(), DockFrame), f"{dock.objectName()} is not framed"
        assert dock.minimumSizeHint().height() <= 40, (
            f"{dock.objectName()} cannot be dragged below {dock.minimumSizeHint().height()} px")
    # dragged small, the Run dock shows only its title and tabs; F5 (which shows the dock)
    # gives its content back the room it needs
    from PySide6.QtCore import Qt

    from widgets.docking import ensure_room

    dock = window.run_dock
    window.resizeDocks([dock], [40], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: dock.height() <= 60, timeout=2000)
    frame = dock.widget()
    assert frame.viewport().height() < frame.widget().minimumSizeHint().height()
    ensure_room(window, dock)
    assert frame.viewport().height() >= frame.widget().minimumSizeHint().height(), (
        f"{frame.viewport().height()} px for a content that needs {frame.widget().minimumSizeHint().height()}")
    # the user drags it small again: it stays small, whatever its content asks for later
    window.resizeDocks([dock], [40], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: dock.height() <= 60, timeout=2000)
    assert frame.fitting is None
    window.run_dock.panel.show_failure(RunResult(status="failed", error="x\n" * 10))
    for _ in range(3):  # the deferred fitting would run here (a zero timer), had it stayed on
        QApplication.processEvents()
    assert dock.height() <= 60, f"a dock the user dragged small grew back to {dock.height()} px"
