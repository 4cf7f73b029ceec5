"""Save As with the core's external-data options, and the Save / Discard / Cancel prompt
for closing unsaved work."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QWidget,
)

from editor.io import SaveOptions

EXTERNAL_MODES = [
    ("preserve", "Keep external data as it is (preserve)"),
    ("inline", "Everything inside the .onnx file (inline)"),
    ("single-file", "Large tensors in one data file beside the model"),
]


class SaveAsDialog(QDialog):
    """Choose path, format and external-data mode; ``options()`` is the SaveOptions."""

    def __init__(self, doc, parent: QWidget | None = None, *, start: str | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.setWindowTitle("Save Model As")
        self.path_edit = QLineEdit(start or str(doc.path or "model.onnx"), self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        self.format = QComboBox(self)
        for key, label in (("auto", "By extension"), ("binary", "Binary protobuf"), ("text", "ONNX text")):
            self.format.addItem(label, key)
        self.external = QComboBox(self)
        for key, label in EXTERNAL_MODES:
            self.external.addItem(label, key)
        self.location = QLineEdit(self)
        self.location.setPlaceholderText("default: <model name>.data")
        self.threshold = QSpinBox(self)
        self.threshold.setRange(0, 1 << 30)
        self.threshold.setValue(1024)
        self.threshold.setSuffix(" bytes")
        self.external.currentIndexChanged.connect(self._sync)
        form = QFormLayout(self)
        form.addRow("File", row)
        form.addRow("Format", self.format)
        form.addRow("External data", self.external)
        form.addRow("Data file", self.location)
        form.addRow("Tensors from", self.threshold)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._sync()
        self.resize(560, 220)

    def _sync(self) -> None:
        single = self.external.currentData() == "single-file"
        self.location.setEnabled(single)
        self.threshold.setEnabled(single)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save Model As", self.path_edit.text(),
                                              "ONNX models (*.onnx *.onnxtxt);;All files (*)")
        if path:
            self.path_edit.setText(path)

    def path(self) -> Path:
        return Path(self.path_edit.text()).expanduser()

    def options(self) -> SaveOptions:
        return SaveOptions(format=self.format.currentData(), external=self.external.currentData(),
                           location=self.location.text().strip() or None, size_threshold=self.threshold.value())


SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


def ask_unsaved(parent: QWidget | None, name: str) -> str:
    """Save / Discard / Cancel for one document with unsaved changes."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                      f"Save the changes to {name} before closing?",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return SAVE
    if answer == QMessageBox.StandardButton.Discard:
        return DISCARD
    return CANCEL
