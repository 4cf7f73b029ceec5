"""The Run dock says, next to the result, what the result contradicts: a declared output
shape the model does not produce, and onnxruntime's own warnings."""

from __future__ import annotations

import onnx
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model
from tests.widgets.test_run_dock import run_and_wait

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


@pytest.fixture
def dock(window):
    return window.run_dock  # the window installs it (widgets.run.install_run_dock)


@pytest.mark.timeout(120)
def test_run_dock_shows_shape_contradictions_and_ort_warnings(qtbot, window, dock, tmp_path) -> None:
    m = onnx.load(str(SQUEEZENET))
    out = m.graph.output[0]
    out.type.tensor_type.shape.dim[1].dim_value = 999  # declared [1, 999, 1, 1]; it computes 1000
    path = tmp_path / "wrong.onnx"
    onnx.save(m, path)
    open_model(qtbot, window, path)
    result = run_and_wait(qtbot, dock)
    assert result.ok, result.error
    lines = dock.panel.truth_lines()
    assert any(out.name in ln and "declared 999" in ln for ln in lines), lines
    assert any(ln.startswith("onnxruntime warning:") for ln in lines), lines
    assert "shape contradicts the model" in dock.panel.status.text()
