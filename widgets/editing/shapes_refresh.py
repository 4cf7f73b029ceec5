"""Graph ▸ Refresh Shapes…: rewrite the model's value_info from the shape engine, undoable.

The user chooses what happens (:data:`editor.commands.shapes.MODES`): correct stale
entries and add missing ones, only add missing ones, or strip every entry. The engine runs
off the GUI thread on a structure snapshot of the document (large weights left out), with
a cancellable progress dialog; its table is handed to one
:class:`~editor.commands.shapes.RefreshShapes` command, which goes on the undo stack only
if the document did not change meanwhile (else the user is told to run it again).

Declared as a registry action (``graph.refresh_shapes``) from this module; the window
installs it with one call.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QRadioButton,
    QVBoxLayout,
)

from widgets.actions.registry import ActionSpec
from widgets.editing.background import BackgroundEdit
from widgets.editing.common import run_command, show_refusal

#: (mode, button text, what it does) in the order the dialog offers them
CHOICES = (
    ("update", "&Update: correct stale shapes and add missing ones",
     "Entries whose declared shape disagrees with the engine's fully known one are corrected; "
     "values without an entry get one."),
    ("add", "&Add missing shapes only", "Existing entries stay as the file has them."),
    ("strip", "&Strip all shapes", "Every value_info entry is removed (graph inputs and outputs stay)."),
)


class RefreshShapesDialog(QDialog):
    """Pick one of :data:`CHOICES`."""

    def __init__(self, parent=None, mode: str = "update") -> None:
        super().__init__(parent)
        self.setWindowTitle("Refresh Shapes")
        lay = QVBoxLayout(self)
        intro = QLabel("Rewrite the model's value_info (the declared shapes of inner values) from "
                       "the shape engine. One undoable step; it changes the file when you save.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.group = QButtonGroup(self)
        for k, (m, text, tip) in enumerate(CHOICES):
            button = QRadioButton(text)
            button.setToolTip(tip)
            button.setChecked(m == mode)
            self.group.addButton(button, k)
            lay.addWidget(button)
            note = QLabel(tip)
            note.setWordWrap(True)
            note.setContentsMargins(24, 0, 0, 6)
            lay.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def mode(self) -> str:
        return CHOICES[max(0, self.group.checkedId())][0]


class RefreshShapesAction(QObject):
    """The action's behaviour on one window; ``run_dialog`` is replaceable in tests."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.run_dialog = lambda dialog: dialog.exec()
        #: the engine's run off the GUI thread (tests wait on it)
        self.pending: threading.Thread | None = None
        self._timer: QTimer | None = None

    def trigger(self) -> None:
        tab = self.window.current_tab()
        if tab is None:
            return
        dialog = RefreshShapesDialog(self.window)
        if not self.run_dialog(dialog):
            return
        self.start(tab.doc, dialog.mode())

    def start(self, doc, mode: str) -> None:
        """Compute the table off the GUI thread, then push one RefreshShapes(mode)."""
        from editor.commands.shapes import RefreshShapes

        if mode == "strip":  # nothing to compute
            self._apply(doc, RefreshShapes(mode))
            return
        from editor.shapes import infer_model
        from editor.shapes.engine import structure_snapshot

        snapshot = structure_snapshot(doc.model)  # the worker reads a copy: editing goes on
        job = BackgroundEdit(
            self.window, doc, lambda: infer_model(snapshot),
            lambda table: self._apply(doc, RefreshShapes(mode, table=table)),
            title="Refresh Shapes", label="Inferring shapes…", name="refresh-shapes",
            stale="the model changed while its shapes were inferred: run Refresh Shapes again")
        self.pending, self._timer = job.thread, job.timer

    def _apply(self, doc, cmd) -> None:
        n = len(doc.model.graph.value_info)
        if run_command(self.window, doc, cmd):
            m = len(doc.model.graph.value_info)
            self.window.statusBar().showMessage(f"{cmd.label}: {m} value_info entries in the main graph (were {n})",
                                                10000)


def install_refresh_shapes(window) -> RefreshShapesAction:
    """Declare ``graph.refresh_shapes`` on ``window.registry``; returns its behaviour."""
    behaviour = RefreshShapesAction(window)
    window.registry.add(ActionSpec(
        id="graph.refresh_shapes", title="Refresh &Shapes…", run=behaviour.trigger, menu="Graph",
        section="shapes", enabled_when=lambda: window.current_tab() is not None,
        tip="Rewrite value_info from the shape engine: correct stale shapes, add missing ones, or strip them",
        keywords="value_info shape inference infer declared stale"))
    window.refresh_shapes = behaviour
    return behaviour
