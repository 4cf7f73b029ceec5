"""Remote backends in the window: the Backends settings page (address kept in QSettings,
Test Connection lists the cluster's nodes and onnxruntime builds) and a run from the Run
dock on a real local Ray cluster."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model
from tests.widgets.test_run_dock import run_and_wait

SILERO = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def test_picker_lists_remote_backends_after_local_ones(qtbot) -> None:
    from editor.runtime.remote import ray_available
    from widgets.run.options import RunOptionsPanel

    panel = RunOptionsPanel()
    qtbot.addWidget(panel)
    keys = [panel.backend.itemData(i) for i in range(panel.backend.count())]
    assert keys[:3] == ["auto", "ort", "reference"] and "ray" in keys[3:]
    item = panel.backend.model().item(keys.index("ray"))
    assert item.isEnabled() == ray_available()


def test_page_saves_address_in_settings_only(qtbot, tmp_path) -> None:
    from widgets.run.backends_page import BackendsPage
    from widgets.run.remote import cluster_config

    page = BackendsPage()
    qtbot.addWidget(page)
    page.address.setText("ray://head.example:10001")
    page.gpus.setValue(1)
    page.resources.setText('{"node:10.0.0.5": 0.01}')
    page.runtime_env.setText('{"pip": ["onnxruntime-gpu"]}')
    page.save()
    config = cluster_config()
    assert config.address == "ray://head.example:10001" and config.num_gpus == 1
    assert config.resources == {"node:10.0.0.5": 0.01} and config.runtime_env == {"pip": ["onnxruntime-gpu"]}
    again = BackendsPage()  # the page shows what was saved
    qtbot.addWidget(again)
    assert again.address.text() == "ray://head.example:10001" and again.gpus.value() == 1
    assert again.resources.text() == '{"node:10.0.0.5": 0.01}'
    # a field that is not a JSON object is one clear line on the page, not an exception
    again.runtime_env.setText("[1, 2]")
    again.test_connection()
    assert "Runtime environment must be a JSON object" in again.status.text()


@pytest.mark.timeout(180)
def test_test_connection_and_a_dock_run_on_the_cluster(qtbot, window, ray_cluster) -> None:
    from widgets.run.backends_page import BackendsPage

    page = BackendsPage()
    qtbot.addWidget(page)
    page.address.setText(ray_cluster)
    with qtbot.waitSignal(page.tested, timeout=120_000) as blocker:
        page.test_connection()
    assert blocker.args == [True], page.status.text()
    assert page.nodes.rowCount() >= 1 and page.nodes.item(0, 3).text() not in ("", "-")
    assert "CPU" in page.nodes.item(0, 4).text()
    page.save()

    dock = window.run_dock
    open_model(qtbot, window, SILERO)
    options = dock.panel.options
    dock.panel.left_tabs.setCurrentWidget(dock.panel.options_page)
    # the provider list follows the backend: the cluster host's onnxruntime for the remote one
    with qtbot.waitSignal(dock.service.remoteProvidersKnown, timeout=120_000) as known:
        options.backend.setCurrentIndex(options.backend.findData("ray"))
    assert "CPUExecutionProvider" in known.args[0]
    assert options.providers.count() >= 1
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    assert dock.service.remote_runner is not None and result.detail and "on " in result.detail
    assert ray_cluster not in dock.panel.status.text()
