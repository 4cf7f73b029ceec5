"""Side columns that never squeeze the main one away in a narrow dock.

A tree in a side dock (Find, Problems, Outline) has one column that matters (the name,
the problem) and a few short ones (kind, graph, where). Fixed or content-sized side
columns cut the main column to "…s" at 1,280 x 800. ``fit_columns`` keeps each side
column at its content width up to a fraction of the view's width; the main column
stretches over the rest, and long texts are elided in the middle (``encoder/…/MatMul``)
with the whole text on hover (the panels set the tool tips).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView


class _ColumnFitter(QObject):
    def __init__(self, view: QAbstractItemView, main: int, caps: dict[int, float]) -> None:
        super().__init__(view)
        self.view = view
        self.caps = caps
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(main, QHeaderView.ResizeMode.Stretch)
        for column in caps:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        view.viewport().installEventFilter(self)
        model = view.model()
        if model is not None:
            for signal in (model.modelReset, model.rowsInserted, model.layoutChanged):
                signal.connect(self.fit)

    def header(self) -> QHeaderView:
        return self.view.header() if hasattr(self.view, "header") else self.view.horizontalHeader()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize and shiboken6.isValid(self.view):
            self.fit()
        return False

    def fit(self, *_args) -> None:
        if not shiboken6.isValid(self) or not shiboken6.isValid(self.view):
            return  # the view is being destroyed (its model signals as it goes)
        width = self.view.viewport().width()
        header = self.header()
        for column, fraction in self.caps.items():
            wanted = max(self.view.sizeHintForColumn(column), header.sectionSizeHint(column))
            header.resizeSection(column, max(24, min(wanted, int(width * fraction))))


def fit_columns(view: QAbstractItemView, *, main: int, caps: dict[int, float]) -> QObject:
    """Stretch column ``main``; keep each column of ``caps`` at its content width, at most
    that fraction of the view's width. Returns the helper (owned by ``view``)."""
    return _ColumnFitter(view, main, caps)
