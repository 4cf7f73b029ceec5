"""Qt's own file dialogs open wide enough for their Size and Date columns.

Where the platform has no native dialog (Linux without a portal or platform theme, the
offscreen platform), ``QFileDialog`` shows Qt's widget dialog at its small default size,
and the Detail view cuts the Size, Type and Date Modified columns. An application-wide event
filter widens each such dialog when it is first shown and sizes those columns to their
contents; the name column keeps the rest. Native dialogs are the platform's business.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QFileDialog, QHeaderView, QTreeView

MIN_WIDTH = 860
MIN_HEIGHT = 540


class _FileDialogFit(QObject):
    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        # NOTE: the type test first: this filter sees every event of the application, and
        # event.type() builds a Python enum each time (a few ms per edit in the window)
        if isinstance(obj, QFileDialog) and event.type() == QEvent.Type.Show and not obj.property("_fitted"):
            obj.setProperty("_fitted", True)
            fit_file_dialog(obj)
        return False


def fit_file_dialog(dialog: QFileDialog) -> None:
    """Widen ``dialog`` (within its screen) and give the detail columns their text."""
    screen = dialog.screen().availableGeometry() if dialog.screen() is not None else None
    width, height = max(dialog.width(), MIN_WIDTH), max(dialog.height(), MIN_HEIGHT)
    if screen is not None:
        width, height = min(width, screen.width()), min(height, screen.height())
    dialog.resize(width, height)
    for tree in dialog.findChildren(QTreeView):
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, header.count()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)


def install_file_dialog_fit(app: QApplication | None = None) -> QObject | None:
    """Install the filter once per application; returns it (None without an application)."""
    app = app or QApplication.instance()
    if app is None:
        return None
    existing = getattr(app, "_file_dialog_fit", None)
    if existing is None:
        existing = _FileDialogFit(app)
        app.installEventFilter(existing)
        app._file_dialog_fit = existing
    return existing
