"""The Run dock in the main window, with real runs in the runtime's child process: random and
image inputs, symbolic dims, cancel, a crashing worker, intermediate values of a clicked value,
profiles and the heat map, export, and a look at the whole window."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

RUN_TIMEOUT_MS = 90_000
SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
SILERO = CORPUS / "real" / "fw_silero_vad_v6.onnx"
PPOCR = CORPUS / "real" / "ppocrv4_det.onnx"

pytestmark = pytest.mark.skipif(not SQUEEZENET.is_file() or not SILERO.is_file(), reason="corpus not available")


@pytest.fixture
def dock(window):
    return window.run_dock  # the window installs it (widgets.run.install_run_dock)


def run_and_wait(qtbot, dock, *, profile: bool = False):
    controller = dock.controller
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        assert dock.run(profile=profile)
        assert dock.service.busy and not dock.panel.run_button.isEnabled()
        assert dock.panel.cancel_button.isEnabled() and dock.panel.busy.isVisible()
    qtbot.waitUntil(lambda: not dock.service.busy)
    return blocker.args[0]


def test_install_adds_dock_and_menu(window, dock) -> None:
    from PySide6.QtCore import Qt

    assert window.run_dock is dock
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "Run" in titles and titles.index("Run") < titles.index("Help")
    assert dock.act_run.shortcut().toString() == "F5"
    assert dock.act_cancel.shortcut().toString() == "Shift+F5"
    assert dock.act_profile.shortcut().toString() == "Ctrl+F5"
    assert not dock.act_run.isEnabled()  # no model yet
    assert dock.panel.inputs_stack.currentWidget() is dock.panel.no_model


def test_run_real_model_with_random_inputs(qtbot, qtmodeltester, window, dock) -> None:
    open_model(qtbot, window, SILERO)
    panel = dock.panel
    assert dock.act_run.isEnabled()
    inputs = dock.controller.input_panel
    assert list(inputs.editors) == ["input", "h", "c"]
    assert inputs.dim_values() == {"seq_len": 16}
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    assert result.backend == "ort"
    model = panel.results_model
    qtmodeltester.check(model, force_py=True)
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert names == ["speech_probs", "hn", "cn"]
    assert model.index(1, 2).data() == "[1, 1, 128]" and model.index(1, 3).data() == "float32"
    assert "Ran on onnxruntime" in panel.status.text()
    assert not panel.banner.isVisible()
    # the selected row's value is in the detail views
    assert panel.detail.name == "speech_probs" and panel.detail.histogram.counts is not None
    np.testing.assert_array_equal(dock.controller.value("hn"), result.value("hn"))


def test_image_input_on_squeezenet(qtbot, tmp_path, window, dock) -> None:
    from PySide6.QtGui import QColor, QImage

    png = tmp_path / "cat.png"
    img = QImage(40, 30, QImage.Format.Format_RGB32)
    img.fill(QColor(200, 120, 40))
    assert img.save(str(png))
    open_model(qtbot, window, SQUEEZENET)
    editor = dock.controller.input_panel.editors["data_0"]
    editor.set_mode("image")
    editor.image_path.setText(str(png))
    editor.image_norm.setCurrentIndex(editor.image_norm.findData("imagenet"))
    feeds = dock.controller.input_panel.feeds()
    assert feeds["data_0"].shape == (1, 3, 224, 224) and feeds["data_0"].dtype == np.float32
    assert feeds["data_0"][0, 0, 100, 100] == pytest.approx((200 / 255 - 0.485) / 0.229, rel=1e-4)
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    out = result.value("softmaxout_1")
    assert out.shape[:2] == (1, 1000) and abs(float(out.sum()) - 1.0) < 1e-3


@pytest.mark.skipif(not PPOCR.is_file(), reason="corpus model missing")
def test_symbolic_dims_take_user_values(qtbot, window, dock) -> None:
    open_model(qtbot, window, PPOCR)
    inputs = dock.controller.input_panel
    keys = inputs.dims.keys()
    assert keys == ["p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]
    inputs.dims.set_value("p2o.DynamicDimension.1", 64)
    inputs.dims.set_value("p2o.DynamicDimension.2", 96)
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    out = next(iter(result.outputs.values()))
    assert out.shape == (1, 1, 64, 96)
    # remembered for this model: a fresh panel (as after a restart) gets the values back
    from widgets.run.inputs_panel import InputPanel

    again = InputPanel()
    qtbot.addWidget(again)
    again.set_model(dock.controller.doc.model, dock.controller.model_key())
    assert again.dim_values()["p2o.DynamicDimension.2"] == 96


def test_cancel_a_hanging_run(qtbot, monkeypatch, window, dock) -> None:
    monkeypatch.setenv("ONNX_STUDIO_RUNTIME_TEST_HOOKS", "1")  # the worker's hang hook
    open_model(qtbot, window, SILERO)
    dock._debug = "hang"
    controller = dock.controller
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        assert dock.run()
        qtbot.wait(300)
        assert dock.service.busy
        dock.act_cancel.trigger()
    result = blocker.args[0]
    assert result.status == "cancelled"
    qtbot.waitUntil(lambda: not dock.service.busy)
    assert dock.panel.banner.isVisible() and "cancelled" in dock.panel.banner.text()
    assert dock.panel.run_button.isEnabled() and not dock.panel.cancel_button.isEnabled()
    dock._debug = None
    assert run_and_wait(qtbot, dock).ok  # a fresh worker takes the next run


def test_crash_shows_message_and_window_survives(qtbot, monkeypatch, window, dock) -> None:
    monkeypatch.setenv("ONNX_STUDIO_RUNTIME_TEST_HOOKS", "1")
    open_model(qtbot, window, SILERO)
    options = dock.panel.options
    options.backend.setCurrentIndex(options.backend.findData("ort"))  # pinned: no fallback
    dock._debug = "sigfpe"
    result = run_and_wait(qtbot, dock)
    assert result.status == "crashed" and result.signal == "SIGFPE"
    banner = dock.panel.banner
    assert banner.isVisible() and "crashed" in banner.text() and "SIGFPE" in banner.text()
    assert window.isVisible() and dock.act_run.isEnabled()
    assert "crashed" in dock.panel.status.text()
    # automatic fallback: the crash of onnxruntime is reported and the reference evaluator runs
    options.backend.setCurrentIndex(options.backend.findData("auto"))
    dock._debug = "ort:sigsegv"
    result = run_and_wait(qtbot, dock)
    assert result.ok and result.backend == "reference"
    assert result.attempts[0].status == "crashed"
    assert "onnxruntime crashed" in dock.panel.status.text() and "reference" in dock.panel.status.text()


def test_intermediate_value_of_clicked_value(qtbot, window, dock) -> None:
    tab = open_model(qtbot, window, SILERO)
    assert run_and_wait(qtbot, dock).ok
    doc = tab.doc
    nid = next(n for _s, n, node in doc.index.iter_nodes() if node.op_type == "Conv")
    name = doc.node(nid).output[0]
    assert dock.controller.value(name) is None
    tab.canvas.view.select_keys([f"n:{nid}"])  # as a click on the box does
    panel = dock.panel
    assert panel.capture_button.isVisible() and "not captured" in panel.banner.text()
    before = doc.serialize()
    with qtbot.waitSignal(dock.controller.finished, timeout=RUN_TIMEOUT_MS):
        panel.capture_button.click()
    qtbot.waitUntil(lambda: not dock.service.busy)
    value = dock.controller.value(name)
    assert isinstance(value, np.ndarray) and value.ndim == 3
    assert doc.serialize() == before and not doc.is_modified  # the user's model is untouched
    assert panel.current_value_name() == name
    record = dock.controller.record(name)
    assert record.role == "intermediate"
    # clicking another node whose value was not captured says so; the captured one shows again
    tab.canvas.view.select_keys([])
    tab.canvas.view.select_keys([f"n:{nid}"])
    assert panel.current_value_name() == name and not panel.capture_button.isVisible()


def test_capture_every_value(qtbot, window, dock) -> None:
    open_model(qtbot, window, SILERO)
    dock.panel.options.set_capture("all")
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    roles = {r.role for r in result.outputs.values()}
    assert roles == {"output", "intermediate"} and len(result.outputs) > 10


def test_profile_table_and_heat_map(qtbot, qtmodeltester, window, dock) -> None:
    tab = open_model(qtbot, window, SILERO)
    result = run_and_wait(qtbot, dock, profile=True)
    assert result.ok, result.error
    panel = dock.panel
    model = panel.profile_model
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() >= 5
    assert panel.results_tabs.currentIndex() == 1
    # the sortable view shows the slowest first
    proxy = panel.profile_proxy
    times = [proxy.index(r, 2).data(proxy.sortRole()) for r in range(proxy.rowCount())]
    assert times == sorted(times, reverse=True)
    by_node = dock.controller.profile_by_node_id()
    assert by_node and all(tab.doc.has_node(n) for n in by_node)
    heat = dock.heatmaps[id(tab)]
    assert heat.overlay.scene() is tab.canvas.scene and heat.overlay.cell_count() > 0
    assert set(heat.times_by_key()) <= set(tab.canvas.scene.node_items())
    panel.heatmap_check.setChecked(False)
    assert heat.overlay.scene() is None
    panel.heatmap_check.setChecked(True)
    assert heat.overlay.scene() is tab.canvas.scene
    # double-clicking a row selects its node on the canvas
    slowest = next(proxy.index(r, 0) for r in range(proxy.rowCount()) if tab.doc.find_nodes(proxy.index(r, 0).data()))
    panel.profile_view.doubleClicked.emit(slowest)
    current = tab.selection.current
    assert current is not None and current.kind == "node" and tab.doc.node(current.node).name == slowest.data()
    # a plain run replaces the profiled result: its heat map goes
    assert run_and_wait(qtbot, dock).ok
    assert heat.overlay.scene() is None and panel.profile_model.rowCount() == 0


def test_export_npy_round_trip(qtbot, tmp_path, window, dock) -> None:
    open_model(qtbot, window, SILERO)
    result = run_and_wait(qtbot, dock)
    path = dock.panel.export_npy("hn", tmp_path / "hn.npy")
    np.testing.assert_array_equal(np.load(path), result.value("hn"))
    archive = np.load(dock.panel.export_npz(tmp_path / "all.npz"))
    assert sorted(archive.files) == ["cn", "hn", "speech_probs"]
    np.testing.assert_array_equal(archive["cn"], result.value("cn"))


def test_bad_input_is_reported_without_a_run(qtbot, window, dock) -> None:
    open_model(qtbot, window, SILERO)
    editor = dock.controller.input_panel.editors["h"]
    editor.set_mode("file")
    editor.file_path.setText("/nonexistent/h.npy")
    assert not dock.run()
    assert not dock.service.busy
    assert "input file not found" in dock.panel.banner.text()


def test_edit_marks_result_stale_and_runs_edited_model(qtbot, window, dock) -> None:
    from editor.commands import SetNodeField

    tab = open_model(qtbot, window, SILERO)
    assert run_and_wait(qtbot, dock).ok
    nid = next(n for _s, n, node in tab.doc.index.iter_nodes() if node.name)
    tab.doc.execute(SetNodeField(nid, "name", "renamed_node"))
    assert dock.controller.stale
    source = dock.controller.model_source()
    assert source.data is not None and source.key.startswith("doc:")  # the edited document, not the file
    result = run_and_wait(qtbot, dock)
    assert result.ok and not dock.controller.stale
    # an edited input shape rebuilds the input panel, keeping the input modes
    from editor.commands import SetDimension

    inputs = dock.controller.input_panel
    inputs.editors["h"].set_mode("zeros")
    tab.doc.execute(SetDimension(tab.doc.index.main, "input", 0, "frames"))
    assert inputs.dims.keys() == ["frames"]
    assert inputs.editors["h"].current_mode() == "zeros"
    tab.doc.undo()
    assert inputs.dims.keys() == ["seq_len"]


def test_screenshot_of_window_after_run(qtbot, tmp_path, window, dock) -> None:
    tab = open_model(qtbot, window, SILERO)
    window.resize(1500, 950)
    assert run_and_wait(qtbot, dock, profile=True).ok
    dock.panel.results_tabs.setCurrentIndex(0)
    qtbot.wait(50)
    shot = tmp_path / "run_dock.png"
    assert window.grab().save(str(shot))
    image = window.grab().toImage()
    assert image.width() >= 1400
    assert shot.stat().st_size > 10_000
    assert tab.canvas.scene is dock.heatmaps[id(tab)].overlay.scene()


def test_time_limit_stops_a_hanging_run(qtbot, monkeypatch, window, dock) -> None:
    monkeypatch.setenv("ONNX_STUDIO_RUNTIME_TEST_HOOKS", "1")
    open_model(qtbot, window, SILERO)
    dock.panel.options.timeout.setValue(1)
    dock._debug = "hang"
    result = run_and_wait(qtbot, dock)
    assert result.status == "timeout"
    assert "Time limit reached" in dock.panel.banner.text()
    assert dock.act_run.isEnabled()


def test_closing_the_window_stops_a_running_worker(qtbot, monkeypatch, window, dock) -> None:
    monkeypatch.setenv("ONNX_STUDIO_RUNTIME_TEST_HOOKS", "1")
    open_model(qtbot, window, SILERO)
    dock._debug = "hang"
    assert dock.run()
    qtbot.waitUntil(lambda: dock.service.runner.worker_pid is not None, timeout=RUN_TIMEOUT_MS)
    pid = dock.service.runner.worker_pid
    window.close()
    assert dock.service.runner.worker_pid is None
    import os

    with pytest.raises(OSError):
        os.kill(pid, 0)  # the child process is gone


def test_options_tab_lists_the_worker_providers(qtbot, window, dock) -> None:
    open_model(qtbot, window, SILERO)
    panel = dock.panel
    with qtbot.waitSignal(dock.service.providersKnown, timeout=RUN_TIMEOUT_MS):
        panel.left_tabs.setCurrentWidget(panel.options_page)
    providers = [panel.options.providers.item(i).data(0x0100) for i in range(panel.options.providers.count())]
    assert "CPUExecutionProvider" in providers and providers[-1] == "CPUExecutionProvider"
    assert run_and_wait(qtbot, dock).ok  # the warm worker runs the model


def test_edited_reruns_keep_one_copy_and_closing_the_tab_releases_it(qtbot, tmp_path, window, dock) -> None:
    import shutil

    from editor.commands import SetNodeField

    path = tmp_path / SILERO.name
    shutil.copyfile(SILERO, path)
    tab = open_model(qtbot, window, path)
    assert run_and_wait(qtbot, dock).ok
    doc = tab.doc
    nid = doc.main.node_ids[0]
    for i in range(3):  # edit -> run: each run sends a new revision of the same document
        doc.execute(SetNodeField(nid, "name", f"edited_{i}"))
        assert run_and_wait(qtbot, dock).ok
    runner = dock.service.runner
    assert runner.stats()["models"] == 1
    doc.stack.set_clean()
    window.close_tab(window.tabs.indexOf(tab))
    qtbot.waitUntil(lambda: runner.wait_released(0) and runner.stats().get("models") == 0, timeout=2000)


def test_closing_the_tab_of_a_running_model_stops_its_worker(qtbot, monkeypatch, window, dock) -> None:
    import os

    monkeypatch.setenv("ONNX_STUDIO_RUNTIME_TEST_HOOKS", "1")
    open_model(qtbot, window, SILERO)
    dock._debug = "hang"
    assert dock.run()
    qtbot.waitUntil(lambda: dock.service.runner.worker_pid is not None, timeout=RUN_TIMEOUT_MS)
    pid = dock.service.runner.worker_pid
    qtbot.wait(300)
    window.close_tab(window.tabs.currentIndex())
    qtbot.waitUntil(lambda: not dock.service.busy, timeout=RUN_TIMEOUT_MS)

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        return False

    qtbot.waitUntil(gone, timeout=10_000)


def test_memory_limit_setting_says_its_default(window, dock) -> None:
    from editor.runtime.limits import default_memory_limit_mb, describe_limit

    spin = dock.panel.options.memory
    assert spin.value() == 0 and spin.specialValueText() == f"default ({describe_limit(default_memory_limit_mb())})"
