"""Save As with the core's external-data options, the Save / Discard / Cancel prompt for
closing unsaved work, and the question before writing a model with errors."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from editor.io import SaveOptions
from editor.validation.gate import describe_errors, save_errors

#: the full check also runs before a save of a model this small (milliseconds); bigger
#: ones rely on the live checks and on a full check the user ran (merged into the validator)
FULL_CHECK_BEFORE_SAVE_BYTES = 32 << 20

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


def holds_work(doc) -> bool:  # noqa: ANN001
    """True when ``doc`` has anything a user could lose: a node, a graph input or output, a
    weight. A new empty model does not (closing it asks nothing)."""
    g = doc.model.graph
    return bool(len(g.node) or len(g.input) or len(g.output) or len(g.initializer) or len(doc.model.functions))


def ask_unsaved(parent: QWidget | None, names: list[str]) -> list[str] | str:
    """Save / Discard / Cancel for the documents ``names`` (their tab titles); one answer
    per document, or CANCEL.

    One document gets the usual three buttons; several get one question that lists them all
    with a tick each (ticked: saved), so a Quit with five unsaved tabs is one decision, not
    five: Save All (the ticked ones), Discard All, Cancel."""
    if len(names) == 1:
        return _ask_one(parent, names[0])
    dialog = UnsavedDialog(names, parent)
    answer = dialog.exec()
    if answer == QMessageBox.StandardButton.Save:
        return [SAVE if ticked else DISCARD for ticked in dialog.ticked()]
    if answer == QMessageBox.StandardButton.Discard:
        return [DISCARD] * len(names)
    return CANCEL


def _ask_one(parent: QWidget | None, name: str) -> list[str] | str:
    box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                      f"Save the changes to {name} before closing?",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return [SAVE]
    if answer == QMessageBox.StandardButton.Discard:
        return [DISCARD]
    return CANCEL


class UnsavedDialog(QDialog):
    """Every unsaved document with a tick (ticked: save it); Save All / Discard All /
    Cancel. ``exec()`` returns the QMessageBox button code of the choice."""

    def __init__(self, names: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Unsaved changes")
        layout = QVBoxLayout(self)
        text = QLabel(f"{len(names)} models have changes that are not saved. Save them before closing?", self)
        text.setWordWrap(True)
        layout.addWidget(text)
        self.list = QListWidget(self)
        for name in names:
            item = QListWidgetItem(name)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        layout.addWidget(self.list)
        buttons = QDialogButtonBox(self)
        self.save_button = buttons.addButton("Save All", QDialogButtonBox.ButtonRole.AcceptRole)
        self.discard_button = buttons.addButton("Discard All", QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(lambda: self.done(int(QMessageBox.StandardButton.Save)))
        self.discard_button.clicked.connect(lambda: self.done(int(QMessageBox.StandardButton.Discard)))
        buttons.rejected.connect(lambda: self.done(int(QMessageBox.StandardButton.Cancel)))
        self.list.itemChanged.connect(self._relabel)
        layout.addWidget(buttons)

    def ticked(self) -> list[bool]:
        return [self.list.item(i).checkState() == Qt.CheckState.Checked for i in range(self.list.count())]

    def _relabel(self, _item=None) -> None:  # noqa: ANN001
        ticked = self.ticked()
        self.save_button.setText("Save All" if all(ticked) else f"Save {sum(ticked)} Ticked")


def confirm_invalid_save(parent: QWidget | None, tab, ask=None) -> bool:  # noqa: ANN001
    """Before the window writes ``tab``'s model: True when it has no errors, or the user
    chose to save it anyway (the errors are listed in the question). ``ask(parent, title,
    text, details) -> bool`` replaces the message box (tests)."""
    doc = tab.doc
    errors = save_errors(doc, validator=tab.validator,
                         full=doc.model.ByteSize() < FULL_CHECK_BEFORE_SAVE_BYTES)
    if not errors:
        return True
    n = len(errors)
    name = doc.path.name if doc.path is not None else "this model"
    text = (f"{name} has {n} error{'s' if n != 1 else ''} (see the Problems panel). Tools that "
            "check models, onnxruntime among them, may refuse the saved file. Save it anyway?")
    details = "\n".join(describe_errors(errors))
    return (ask or _ask_invalid)(parent, "Save a model with errors?", text, details)


def _ask_invalid(parent: QWidget | None, title: str, text: str, details: str) -> bool:
    box = QMessageBox(QMessageBox.Icon.Warning, title, text,
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel, parent)
    box.setDetailedText(details)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Save

