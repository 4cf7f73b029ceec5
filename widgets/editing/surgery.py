"""The Surgery menu: fp16 conversion, Append Model (merge) and input/output element types.

Each entry opens a small dialog whose choices are checked by the core as they are made
(the same function the command runs, on a copy), so OK is enabled only for an edit that
will succeed; then one command goes on the undo stack. The fp16 conversion is computed
off the GUI thread (a cancellable progress dialog) and applied as one command after.
Replacing a pattern is a scripting feature for now (``editor.surgery.patterns``).
"""

from __future__ import annotations

import threading

import onnx
from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QTableWidget,
    QVBoxLayout,
)

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.editing.background import BackgroundEdit
from widgets.editing.common import elem_type_combo, run_command, show_refusal

NEW_INPUT = "(stays an input)"


class _CheckedDialog(QDialog):
    """A form whose OK button follows ``check()`` (None = fine, else the reason)."""

    def __init__(self, parent, title: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.form = QFormLayout()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(self.form)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)

    def check(self) -> str | None:  # pragma: no cover - overridden
        return None

    def refresh(self) -> None:
        problem = self.check()
        self.status.setText(problem or self.ok_text())
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)

    def ok_text(self) -> str:
        return "Ready."


class Fp16Dialog(_CheckedDialog):
    def __init__(self, parent, model: onnx.ModelProto) -> None:
        super().__init__(parent, "Convert to fp16")
        self.keep_io = QCheckBox("Keep input and output types (float32)")
        self.bf16 = QCheckBox("bfloat16 instead of float16")
        self.clamp = QCheckBox("Clamp weights beyond fp16's range (else their readers stay fp32)")
        self.keep_ops = QLineEdit()
        self.keep_ops.setPlaceholderText("op types kept in fp32, e.g. Softmax, LayerNormalization")
        for w in (self.keep_io, self.bf16, self.clamp):
            self.form.addRow(w)
        self.form.addRow("Keep ops:", self.keep_ops)
        self._ops = {n.op_type for n in model.graph.node}
        self.keep_ops.textChanged.connect(self.refresh)
        self.refresh()

    def options(self) -> dict:
        from editor.surgery.precision import TARGETS

        return dict(target=TARGETS["bf16" if self.bf16.isChecked() else "fp16"],
                    keep_io_types=self.keep_io.isChecked(), clamp=self.clamp.isChecked(),
                    keep_ops=[t.strip() for t in self.keep_ops.text().split(",") if t.strip()])

    def check(self) -> str | None:
        unknown = [o for o in self.options()["keep_ops"] if o not in self._ops]
        return f"no {', '.join(unknown)} node in the main graph" if unknown else None


class MergeDialog(_CheckedDialog):
    """Which value of the open model feeds each input of the appended one."""

    def __init__(self, parent, model: onnx.ModelProto, other: onnx.ModelProto, other_store=None) -> None:
        super().__init__(parent, "Append Model")
        self.model, self.other, self.other_store = model, other, other_store
        inits = {t.name for t in other.graph.initializer}
        self.inputs = [i.name for i in other.graph.input if i.name not in inits]
        a_inits = {t.name for t in model.graph.initializer}
        choices = [o.name for o in model.graph.output] + [i.name for i in model.graph.input if i.name not in a_inits]
        self.table = QTableWidget(len(self.inputs), 2)
        self.table.setHorizontalHeaderLabels(["input of the appended model", "fed by"])
        self.combos: list[QComboBox] = []
        for row, name in enumerate(self.inputs):
            self.table.setCellWidget(row, 0, QLabel(name))
            box = QComboBox()
            box.addItem(NEW_INPUT)
            box.addItems(choices)
            if name in choices:  # matched by name, like the CLI without --map
                box.setCurrentText(name)
            box.currentIndexChanged.connect(self.refresh)
            self.table.setCellWidget(row, 1, box)
            self.combos.append(box)
        self.form.addRow(self.table)
        self.result = None
        self.refresh()

    def mapping(self) -> dict[str, str]:
        return {box.currentText(): name for name, box in zip(self.inputs, self.combos)
                if box.currentText() != NEW_INPUT}

    def check(self) -> str | None:
        from editor.surgery.merge import merge_models

        try:
            self.result = merge_models(self.model, self.other, self.mapping(), b_store=self.other_store)
        except StudioError as exc:
            self.result = None
            return exc.message
        return None

    def ok_text(self) -> str:
        notes = self.result.notes if self.result is not None else []
        return "Ready." + ("\n" + "\n".join(notes) if notes else "")


class IOTypeDialog(_CheckedDialog):
    def __init__(self, parent, model: onnx.ModelProto) -> None:
        super().__init__(parent, "Set Input/Output Type")
        self.model = model
        inits = {t.name for t in model.graph.initializer}
        self.name = QComboBox()
        self.name.addItems([i.name for i in model.graph.input if i.name not in inits] +
                           [o.name for o in model.graph.output])
        self.dtype = elem_type_combo(self)
        self.lossy = QCheckBox("Allow a lossy cast (values may not fit)")
        self.form.addRow("Value:", self.name)
        self.form.addRow("Element type:", self.dtype)
        self.form.addRow(self.lossy)
        for sig in (self.name.currentIndexChanged, self.dtype.currentIndexChanged, self.lossy.toggled):
            sig.connect(self.refresh)
        self.refresh()

    def types(self) -> dict[str, int]:
        return {self.name.currentText(): int(self.dtype.currentData())}

    def check(self) -> str | None:
        from editor.surgery.io_types import set_io_types

        try:
            set_io_types(self.model, self.types(), allow_lossy=self.lossy.isChecked())
        except StudioError as exc:
            return exc.message
        return None


class SurgeryActions(QObject):
    """The Surgery menu of an :class:`~widgets.editing.controller.EditingController`."""

    def __init__(self, controller) -> None:
        super().__init__(controller)
        self.controller = controller
        window = controller.window
        has_tab = lambda: window.current_tab() is not None  # noqa: E731
        window.registry.add_all([
            ActionSpec("surgery.fp16", "Convert to &fp16…", self.convert_fp16, menu="Surgery", enabled_when=has_tab,
                       keywords="half precision float16"),
            ActionSpec("surgery.append", "&Append Model…", self.append_model, menu="Surgery", enabled_when=has_tab,
                       keywords="merge"),
            ActionSpec("surgery.io_type", "Set Input/Output &Type…", self.set_io_type, menu="Surgery",
                       enabled_when=has_tab),
        ])
        #: the conversion running off the GUI thread (tests wait on it)
        self.pending: threading.Thread | None = None
        self.last_result = None

    def _doc(self):
        tab = self.controller.window.current_tab()
        return tab.doc if tab is not None else None

    # -- fp16 ------------------------------------------------------------------------------
    def convert_fp16(self) -> None:
        doc = self._doc()
        if doc is None:
            return
        dialog = Fp16Dialog(self.controller.window, doc.model)
        if not self.controller.run_dialog(dialog):
            return
        self.start_conversion(doc, dialog.options())

    def start_conversion(self, doc, options: dict) -> None:
        from editor.passes.apply import ApplyModel
        from editor.surgery.precision import convert_precision

        model = onnx.ModelProto()
        model.CopyFrom(doc.model)  # the worker reads a copy: the document may change meanwhile
        window = self.controller.window

        def apply(result) -> None:
            self.last_result = result
            if run_command(window, doc, ApplyModel(result.model, "Convert to fp16")):
                window.statusBar().showMessage(
                    result.summary() + ("; " + "; ".join(result.notes) if result.notes else ""), 15000)

        job = BackgroundEdit(window, doc, lambda: convert_precision(model, store=doc.store, **options), apply,
                             title="Convert to fp16", label="Converting to fp16…", name="fp16-conversion",
                             stale="the model changed during the conversion: run it again", poll_ms=50)
        self.pending, self._timer = job.thread, job.timer

    # -- merge -----------------------------------------------------------------------------
    def append_model(self, path: str | None = None) -> None:
        from editor.document import Document
        from editor.surgery.merge import MergeModel

        doc = self._doc()
        if doc is None:
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.controller.window, "Append Model", "",
                                                  "ONNX models (*.onnx *.onnxtxt);;All files (*)")
            if not path:
                return
        try:
            other = Document.open(path)
        except StudioError as exc:
            show_refusal(self.controller.window, exc.message)
            return
        dialog = MergeDialog(self.controller.window, doc.model, other.model, other.store)
        if self.controller.run_dialog(dialog):
            run_command(self.controller.window, doc,
                        MergeModel(other.model, dialog.mapping(), other_store=other.store))

    # -- I/O types -------------------------------------------------------------------------
    def set_io_type(self) -> None:
        from editor.surgery.io_types import SetIOTypes

        doc = self._doc()
        if doc is None:
            return
        dialog = IOTypeDialog(self.controller.window, doc.model)
        if self.controller.run_dialog(dialog):
            run_command(self.controller.window, doc, SetIOTypes(dialog.types(), allow_lossy=dialog.lossy.isChecked()))
