"""Quantization in the window: Surgery ▸ Quantize… and the Quantization dock (the GUI of
:mod:`editor.quantize`).

Public API:
- :func:`install_quantize` adds the "Quantization" dock (bottom area, tabbed with the other
  bottom docks) and the ``surgery.quantize`` action, and returns the dock.
- :class:`QuantizeDialog` (the request), :class:`QuantizeDock` (``start``, ``requantize``,
  ``outcome``, ``model``, ``heatmap``, ``pending``), :class:`SensitivityModel`,
  :class:`SensitivityHeatMap`.
"""

from __future__ import annotations

from widgets.quantize.dialog import CalibrationChoice, QuantizeDialog
from widgets.quantize.dock import QuantizeDock
from widgets.quantize.heatmap import SensitivityHeatMap, sensitivity_shares
from widgets.quantize.table import SensitivityModel

__all__ = ["CalibrationChoice", "QuantizeDialog", "QuantizeDock", "SensitivityHeatMap", "SensitivityModel",
           "install_quantize", "sensitivity_shares"]


def install_quantize(main_window) -> QuantizeDock:  # noqa: ANN001
    """Add the Quantization dock and Surgery ▸ Quantize…; returns the dock.

    Call it after the Generate dock is installed and before ``restoreState``."""
    from widgets.actions.registry import ActionSpec
    from widgets.actions.view import register_dock
    from widgets.window.layout import add_bottom_dock

    dock = QuantizeDock(main_window)
    add_bottom_dock(main_window, dock, beside=main_window.generate_dock)

    def quantize() -> None:
        tab = main_window.current_tab()
        if tab is None:
            return
        dialog = QuantizeDialog(main_window, tab.doc.model)
        if not main_window.editing.run_dialog(dialog):
            return
        dock.start(tab, dialog.options(), dialog.calibration(), auto=dialog.auto_tolerance(),
                   metric=dialog.auto_metric.currentData())

    main_window.registry.add(ActionSpec(
        "surgery.quantize", "&Quantize…", quantize, menu="Surgery", enabled_when=lambda: main_window.current_tab() is not None,
        tip="int8 / int4 with onnxruntime's quantizers, calibrated on your data; proof and per-node sensitivity",
        keywords="int8 int4 quantization calibration qdq sensitivity"))
    register_dock(main_window, dock, "3")
    main_window.quantize_dock = dock
    return dock
