"""Surgery ▸ Quantize…: what to quantize, how, and on what data.

The choices are the command line's (:mod:`editor.cli.quantize`): a mode (static int8 QDQ /
QOperator, dynamic int8, weight-only int4), types, per-channel, the calibration method,
nodes and op types kept in float, ``--auto``'s tolerance, and the calibration data: a folder
of ``.npz`` sets or pictures, the Run dock's inputs, or random sets (the dialog says, in
orange, that random calibration is a smoke test). OK is enabled only for a request the core
accepts (:meth:`QuantizeOptions.checked`, names the model has, a folder that exists).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from editor.errors import StudioError
from editor.quantize.calibration import RANDOM_WARNING
from editor.quantize.images import ImageParams
from editor.quantize.options import ACTIVATION_TYPES, WEIGHT_TYPES, QuantizeOptions
from editor.quantize.proof import METRICS

__all__ = ["CalibrationChoice", "QuantizeDialog"]

_MODES = (("Static int8 (calibrated activations)", "static"), ("Dynamic int8 (activations at run time)", "dynamic"),
          ("Weight-only int4 (MatMulNBits)", "int4"))
_SOURCES = (("Random input sets (a smoke test)", "random"), ("Folder of .npz sets or pictures", "folder"),
            ("The Run dock's inputs", "run"))


@dataclass
class CalibrationChoice:
    """The data the dialog names; the worker loads it (pictures take time)."""

    kind: str = "random"
    path: str = ""
    count: int = 8
    #: None: the default rule (a fifth of 5+ sets; 4 random ones)
    held_back: int | None = None
    image: ImageParams = field(default_factory=ImageParams)


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


class QuantizeDialog(QDialog):
    """See module docstring; ``run_inputs``: whether the Run dock has inputs to offer."""

    def __init__(self, parent, model: onnx.ModelProto, *, run_inputs: bool = True) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setWindowTitle("Quantize")
        self._nodes = {n.name for n in model.graph.node if n.name}
        self._ops = {n.op_type for n in model.graph.node}
        form = QFormLayout()
        self.mode = QComboBox()
        for label, value in _MODES:
            self.mode.addItem(label, value)
        self.format = QComboBox()
        self.format.addItem("QDQ (QuantizeLinear / DequantizeLinear)", "qdq")
        self.format.addItem("QOperator (QLinearConv, QLinearMatMul …)", "qoperator")
        self.per_channel = QCheckBox("Weights per channel")
        self.per_channel.setChecked(True)
        self.activation = QComboBox()
        self.activation.addItems(list(ACTIVATION_TYPES))
        self.weight = QComboBox()
        self.weight.addItems(list(WEIGHT_TYPES))
        self.method = QComboBox()
        self.method.addItems(["minmax", "entropy", "percentile"])
        self.percentile = QDoubleSpinBox()
        self.percentile.setDecimals(3)
        self.percentile.setRange(90.0, 100.0)
        self.percentile.setValue(99.999)
        self.block = QComboBox()
        for b in (16, 32, 64, 128, 256):
            self.block.addItem(str(b), b)
        self.block.setCurrentText("32")
        self.symmetric = QCheckBox("Symmetric blocks (no zero point)")
        self.preprocess = QCheckBox("onnxruntime's pre-processing first (fold constants and BatchNorm)")
        self.preprocess.setChecked(True)
        form.addRow("Mode:", self.mode)
        form.addRow("Format:", self.format)
        form.addRow("", self.per_channel)
        form.addRow("Activations:", self.activation)
        form.addRow("Weights:", self.weight)
        form.addRow("Calibration method:", self.method)
        form.addRow("Percentile:", self.percentile)
        form.addRow("Block size:", self.block)
        form.addRow("", self.symmetric)
        form.addRow("", self.preprocess)
        # calibration data
        self.source = QComboBox()
        for label, value in _SOURCES:
            if value != "run" or run_inputs:
                self.source.addItem(label, value)
        self.path = QLineEdit()
        self.path.setPlaceholderText("a folder of .npz input sets (run --save) or of pictures")
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._browse)
        path_row = QWidget()
        row = QHBoxLayout(path_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        self.count = QSpinBox()
        self.count.setRange(1, 4096)
        self.count.setValue(8)
        self.held_back = QSpinBox()
        self.held_back.setRange(-1, 64)
        self.held_back.setValue(-1)
        self.held_back.setSpecialValueText("automatic")
        self.mean = QLineEdit()
        self.mean.setPlaceholderText("mean per channel, e.g. 0.485,0.456,0.406 (default: metadata)")
        self.std = QLineEdit()
        self.std.setPlaceholderText("std per channel, e.g. 0.229,0.224,0.225")
        self.bgr = QCheckBox("BGR channel order")
        form.addRow("Calibration data:", self.source)
        form.addRow("Folder:", path_row)
        form.addRow("Random sets:", self.count)
        form.addRow("Held back:", self.held_back)
        form.addRow("Pictures, mean:", self.mean)
        form.addRow("Pictures, std:", self.std)
        form.addRow("", self.bgr)
        # what stays in float
        self.exclude_nodes = QLineEdit()
        self.exclude_nodes.setPlaceholderText("node names kept in float, comma separated")
        self.exclude_ops = QLineEdit()
        self.exclude_ops.setPlaceholderText("op types kept in float, e.g. Softmax, LayerNormalization")
        self.auto = QCheckBox("Keep the most sensitive nodes in float until every output is within")
        self.tolerance = QDoubleSpinBox()
        self.tolerance.setDecimals(4)
        self.tolerance.setRange(0.0, 10.0)
        self.tolerance.setSingleStep(0.005)
        self.tolerance.setValue(0.01)
        self.auto_metric = QComboBox()
        for m, label in zip(METRICS, ("of 1 - cosine", "of the output's range", "absolute")):
            self.auto_metric.addItem(label, m)
        auto_row = QWidget()
        row = QHBoxLayout(auto_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.auto)
        row.addWidget(self.tolerance)
        row.addWidget(self.auto_metric)
        row.addStretch(1)
        form.addRow("Keep nodes:", self.exclude_nodes)
        form.addRow("Keep op types:", self.exclude_ops)
        form.addRow("", auto_row)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self._form = form
        for box in (self.mode, self.format, self.activation, self.weight, self.method, self.block, self.source,
                    self.auto_metric):
            box.currentIndexChanged.connect(self.refresh)
        for edit in (self.path, self.exclude_nodes, self.exclude_ops, self.mean, self.std):
            edit.textChanged.connect(self.refresh)
        for check in (self.per_channel, self.symmetric, self.preprocess, self.auto, self.bgr):
            check.toggled.connect(self.refresh)
        for spin in (self.count, self.held_back, self.percentile, self.tolerance):
            spin.valueChanged.connect(self.refresh)
        self.refresh()

    # -- reading the form ----------------------------------------------------------------------
    def options(self) -> QuantizeOptions:
        return QuantizeOptions(
            mode=self.mode.currentData(), format=self.format.currentData(), per_channel=self.per_channel.isChecked(),
            activation_type=self.activation.currentText(), weight_type=self.weight.currentText(),
            method=self.method.currentText(), percentile=self.percentile.value(),
            exclude_nodes=tuple(_split(self.exclude_nodes.text())), exclude_ops=tuple(_split(self.exclude_ops.text())),
            block_size=int(self.block.currentData()), symmetric=self.symmetric.isChecked(),
            preprocess=self.preprocess.isChecked())

    def calibration(self) -> CalibrationChoice:
        def floats(edit: QLineEdit) -> tuple[float, ...] | None:
            return tuple(float(x) for x in _split(edit.text())) if edit.text().strip() else None

        image = ImageParams(mean=floats(self.mean), std=floats(self.std), bgr=True if self.bgr.isChecked() else None)
        held = None if self.held_back.value() < 0 else self.held_back.value()
        return CalibrationChoice(self.source.currentData(), self.path.text().strip(), self.count.value(), held, image)

    def auto_tolerance(self) -> float | None:
        return self.tolerance.value() if self.auto.isChecked() else None

    # -- checking it ----------------------------------------------------------------------------
    def check(self) -> str | None:
        try:
            options = self.options().checked()
            choice = self.calibration()
        except StudioError as exc:
            return exc.message
        except ValueError:
            return "mean and std take numbers separated by commas"
        unknown = [n for n in options.exclude_nodes if n not in self._nodes]
        if unknown:
            return f"no node named {', '.join(map(repr, unknown[:3]))}"
        unknown = [o for o in options.exclude_ops if o not in self._ops]
        if unknown:
            return f"no node of op type {', '.join(map(repr, unknown[:3]))}"
        if choice.kind == "folder" and not Path(choice.path).is_dir():
            return "choose a folder of .npz input sets or pictures" if not choice.path else \
                f"no folder {choice.path!r}"
        return None

    def refresh(self) -> None:
        mode = self.mode.currentData()
        static, int4 = mode == "static", mode == "int4"
        kind = self.source.currentData()
        shown = {self.format: static, self.activation: static, self.method: static,
                 self.percentile: static and self.method.currentText() == "percentile",
                 self.per_channel: not int4, self.weight: not int4, self.block: int4, self.symmetric: int4,
                 self.path.parentWidget(): kind == "folder", self.count: kind == "random",
                 self.mean: kind == "folder", self.std: kind == "folder", self.bgr: kind == "folder"}
        for widget, visible in shown.items():
            self._form.setRowVisible(widget, visible)
        self.tolerance.setEnabled(self.auto.isChecked())
        self.auto_metric.setEnabled(self.auto.isChecked())
        problem = self.check()
        if problem is not None:
            self.status.setStyleSheet("color: #b03a2e;")
            self.status.setText(problem)
        elif kind == "random":
            self.status.setStyleSheet("color: #b9770e; font-weight: bold;")
            self.status.setText(RANDOM_WARNING.replace(" (--calibration DIR of .npz or images)", ""))
        else:
            self.status.setStyleSheet("")
            self.status.setText(f"Ready: {self.options().describe()}.")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Calibration data", self.path.text())
        if folder:
            self.path.setText(folder)
