"""Model-level edits: the metadata editor (producer, domain, versions, doc strings,
metadata_props, opset imports, IR version), the clean-up pass preview and the opset
conversion dialog.

Every dialog builds ONE command from its differences to the model (a CompositeCommand of
the core's field commands), so "Undo" takes back the whole dialog.
"""

from __future__ import annotations

import threading

import onnx
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.commands import CompositeCommand, SetGraphField, SetMetadataProp, SetModelField, SetOpsetImport
from widgets.editing.common import run_command

def cleanup_passes() -> dict:
    """``editor.passes.CLEANUP_PASSES``, imported when a dialog needs it: the passes bring
    the runtime's front end (their safety check runs the model), a quarter of a second of
    start-up for a window that has not opened a dialog yet."""
    from editor.passes import CLEANUP_PASSES

    return CLEANUP_PASSES


PASS_TITLES = {
    "remove-unused": "Remove unused nodes and initializers",
    "remove-identity": "Remove Identity nodes",
    "toposort": "Topological sort",
    "fold-constants": "Constant folding",
    "fuse-bn-conv": "Fuse BatchNormalization into Conv",
    "fuse-matmul-add": "Fuse MatMul + Add into Gemm",
    "optimize-basic": "Optimize: basic passes to a fixed point",
    "optimize-extended": "Optimize: all passes to a fixed point (fold, fuse, dedupe)",
}


def _table(parent: QWidget, headers: list[str], rows: list[tuple[str, str]]) -> QTableWidget:
    t = QTableWidget(len(rows), len(headers), parent)
    t.setHorizontalHeaderLabels(headers)
    t.horizontalHeader().setStretchLastSection(True)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            t.setItem(r, c, QTableWidgetItem(text))
    return t


def _table_rows(t: QTableWidget) -> list[tuple[str, str]]:
    out = []
    for r in range(t.rowCount()):
        cells = [t.item(r, c).text().strip() if t.item(r, c) is not None else "" for c in range(t.columnCount())]
        if cells[0]:
            out.append((cells[0], cells[1]))
    return out


class MetadataDialog(QDialog):
    """Producer, domain, versions, doc strings, metadata_props, opset imports, IR version."""

    TEXT_FIELDS = (("producer_name", "Producer"), ("producer_version", "Producer version"), ("domain", "Domain"))

    def __init__(self, doc, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        m = doc.model
        self.setWindowTitle("Model Properties")
        self.fields = {f: QLineEdit(getattr(m, f), self) for f, _ in self.TEXT_FIELDS}
        self.model_version = QSpinBox(self)
        self.model_version.setRange(0, 2**31 - 1)
        self.model_version.setValue(m.model_version)
        self.ir_version = QSpinBox(self)
        self.ir_version.setRange(1, onnx.IR_VERSION)
        self.ir_version.setValue(max(1, m.ir_version))
        self.doc_string = QPlainTextEdit(m.doc_string, self)
        self.doc_string.setMaximumHeight(70)
        self.graph_doc = QPlainTextEdit(m.graph.doc_string, self)
        self.graph_doc.setMaximumHeight(70)
        self.props = _table(self, ["key", "value"], [(p.key, p.value) for p in m.metadata_props])
        self.opsets = _table(self, ["domain", "version"], [(i.domain or "ai.onnx", str(i.version)) for i in m.opset_import])
        add_prop = QPushButton("Add metadata row", self)
        add_prop.clicked.connect(lambda: self.props.insertRow(self.props.rowCount()))
        add_opset = QPushButton("Add opset import", self)
        add_opset.clicked.connect(lambda: self.opsets.insertRow(self.opsets.rowCount()))
        self.error_label = QLabel(self)
        self.error_label.setStyleSheet("color: #c03030")
        form = QFormLayout()
        for f, label in self.TEXT_FIELDS:
            form.addRow(label, self.fields[f])
        form.addRow("Model version", self.model_version)
        form.addRow("IR version", self.ir_version)
        form.addRow("Model doc string", self.doc_string)
        form.addRow("Graph doc string", self.graph_doc)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Metadata (metadata_props; clear a key to remove it)", self))
        layout.addWidget(self.props)
        layout.addWidget(add_prop)
        layout.addWidget(QLabel("Opset imports (clear a domain's version to remove it)", self))
        layout.addWidget(self.opsets)
        layout.addWidget(add_opset)
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(560, 720)

    def command(self):
        m = self.doc.model
        parts = []
        for f, _ in self.TEXT_FIELDS:
            if self.fields[f].text() != getattr(m, f):
                parts.append(SetModelField(f, self.fields[f].text()))
        if self.model_version.value() != m.model_version:
            parts.append(SetModelField("model_version", self.model_version.value()))
        if self.ir_version.value() != m.ir_version:
            parts.append(SetModelField("ir_version", self.ir_version.value()))
        if self.doc_string.toPlainText() != m.doc_string:
            parts.append(SetModelField("doc_string", self.doc_string.toPlainText()))
        if self.graph_doc.toPlainText() != m.graph.doc_string:
            parts.append(SetGraphField(self.doc.index.main, "doc_string", self.graph_doc.toPlainText()))
        old = {p.key: p.value for p in m.metadata_props}
        new = dict(_table_rows(self.props))
        for key in old:
            if key not in new:
                parts.append(SetMetadataProp(key, None))
        for key, value in new.items():
            if old.get(key) != value:
                parts.append(SetMetadataProp(key, value))
        old_ops = {(i.domain if i.domain != "ai.onnx" else ""): i.version for i in m.opset_import}
        new_ops = {}
        for domain, version in _table_rows(self.opsets):
            d = "" if domain == "ai.onnx" else domain
            new_ops[d] = int(version) if version else None
        for d, v in new_ops.items():
            if old_ops.get(d) != v:
                parts.append(SetOpsetImport(d, v))
        for d in old_ops:
            if d not in new_ops:
                parts.append(SetOpsetImport(d, None))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else CompositeCommand("Edit model properties", parts)

    def apply(self) -> bool:
        try:
            cmd = self.command()
        except ValueError as exc:
            self.error_label.setText(f"not a number: {exc}")
            return False
        if cmd is None or run_command(self.parentWidget(), self.doc, cmd):
            self.accept()
            return True
        from widgets.editing.common import last_refusal

        self.error_label.setText(last_refusal[0])
        return False


class _CheckRelay(QObject):
    """Carries a safety check's result from its thread to the GUI thread."""

    done = Signal(object)


class PassPreviewDialog(QDialog):
    """Preview one clean-up pass (what it changes, what it cannot do) and apply it, once
    or to a fixed point. Each round is one undo step.

    "Check outputs" runs the model before and after the previewed change on the same
    inputs (the runtime's child process, off the GUI thread, cancellable) and shows the
    largest difference (:func:`editor.passes.safety.check_equivalence`)."""

    def __init__(self, doc, key: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.setWindowTitle("Clean Up")
        self.choice = QComboBox(self)
        for k in cleanup_passes():
            self.choice.addItem(PASS_TITLES.get(k, k), k)
        if key is not None:
            self.choice.setCurrentIndex(self.choice.findData(key))
        self.changes = QListWidget(self)
        self.warnings = QListWidget(self)
        self.warnings.setMaximumHeight(100)
        self.fixed_point = QCheckBox("Run to fixed point (repeat until nothing changes)", self)
        self.summary = QLabel(self)
        self.check_button = QPushButton("Check outputs (run before and after)", self)
        self.check_button.clicked.connect(self.check)
        self.check_label = QLabel("not checked", self)
        self.check_label.setWordWrap(True)
        self._relay = _CheckRelay(self)
        self._relay.done.connect(self._checked)
        self._runner = None
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Close, self)
        self.apply_button = buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.apply_button.clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.choice)
        layout.addWidget(QLabel("Changes:", self))
        layout.addWidget(self.changes, 1)
        layout.addWidget(QLabel("Could not do:", self))
        layout.addWidget(self.warnings)
        layout.addWidget(self.fixed_point)
        layout.addWidget(self.check_button)
        layout.addWidget(self.check_label)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)
        self.choice.currentIndexChanged.connect(lambda _i: self.refresh())
        self.plan = None
        self.applied = 0
        self.resize(560, 480)
        self.refresh()

    def refresh(self) -> None:
        planner = cleanup_passes()[self.choice.currentData()]
        self.plan = planner(self.doc)
        self.changes.clear()
        self.changes.addItems(self.plan.changes or ["(nothing to change)"])
        self.warnings.clear()
        self.warnings.addItems(self.plan.warnings)
        self.apply_button.setEnabled(not self.plan.empty)
        if self._runner is None:
            self.check_button.setEnabled(not self.plan.empty)
            self.check_label.setText("not checked")

    def check(self) -> None:
        """Start (or cancel) the run-based check of the previewed change."""
        if self._runner is not None:
            self._runner.cancel()
            return
        from editor.passes.safety import check_equivalence, planned_model
        from editor.runtime import Runner

        planner = cleanup_passes()[self.choice.currentData()]
        before = onnx.ModelProto()
        before.CopyFrom(self.doc.model)
        after = planned_model(self.doc, planner)
        if after is None:
            self.check_label.setText("nothing to check: the pass changes nothing")
            return
        base = str(self.doc.path.resolve().parent) if self.doc.path is not None else None
        self._runner = runner = Runner()
        self.check_button.setText("Cancel check")
        self.check_label.setText("running the model before and after ...")

        def work() -> None:
            try:
                result = check_equivalence(before, after, base_dir=base, runner=runner)
            except Exception as exc:  # noqa: BLE001 - shown in the dialog, not raised in a thread
                result = exc
            finally:
                runner.close()
            try:
                self._relay.done.emit(result)
            except RuntimeError:  # the dialog (and its relay) went away meanwhile
                pass

        threading.Thread(target=work, name="pass-check", daemon=True).start()

    def _checked(self, result: object) -> None:
        self._runner = None
        self.check_button.setText("Check outputs (run before and after)")
        self.check_button.setEnabled(self.plan is not None and not self.plan.empty)
        if isinstance(result, Exception):
            self.check_label.setText(f"check failed: {result}")
        else:
            self.check_label.setText(result.summary())

    def done(self, code: int) -> None:  # noqa: D102 - a running check dies with the dialog
        if self._runner is not None:
            self._runner.cancel()
        super().done(code)

    def apply(self) -> int:
        """Apply the previewed plan (and, with fixed point, its re-plans); returns rounds."""
        planner = cleanup_passes()[self.choice.currentData()]
        rounds = 0
        plan = self.plan
        while plan is not None and not plan.empty and rounds < 50:
            if not run_command(self.parentWidget(), self.doc, plan.command):
                break
            rounds += 1
            plan = planner(self.doc) if self.fixed_point.isChecked() else None
        self.applied += rounds
        self.summary.setText(f"applied {rounds} round{'s' if rounds != 1 else ''}")
        self.refresh()
        return rounds


class OpsetDialog(QDialog):
    """Convert the model to another default-domain opset; one undo step; lists what the
    converter could not convert (the plan's warnings) before and after."""

    def __init__(self, doc, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.setWindowTitle("Convert Opset")
        self.target = QSpinBox(self)
        self.target.setRange(1, onnx.defs.onnx_opset_version())
        self.target.setValue(doc.opset("") or onnx.defs.onnx_opset_version())
        preview = QPushButton("Preview", self)
        preview.clicked.connect(self.refresh)
        self.changes = QListWidget(self)
        self.warnings = QListWidget(self)
        form = QFormLayout()
        form.addRow(f"Target opset (now {doc.opset('')})", self.target)
        form.addRow("", preview)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Changes:", self))
        layout.addWidget(self.changes)
        layout.addWidget(QLabel("Could not convert:", self))
        layout.addWidget(self.warnings)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.plan = None
        self.resize(520, 420)

    def refresh(self) -> None:
        from editor.passes import plan_convert_opset

        self.plan = plan_convert_opset(self.doc, self.target.value())
        self.changes.clear()
        self.changes.addItems(self.plan.changes or ["(nothing to change)"])
        self.warnings.clear()
        self.warnings.addItems(self.plan.warnings)

    def apply(self) -> bool:
        if self.plan is None or self.plan.name != f"Convert to opset {self.target.value()}":
            self.refresh()
        if self.plan.empty:
            return False
        if run_command(self.parentWidget(), self.doc, self.plan.command):
            self.accept()
            return True
        return False
