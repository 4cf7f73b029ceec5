"""One side of the diff view: a heading (which model, its counts) over a read-only canvas
of that model (a :class:`~widgets.window.document_tab.DocumentTab` of its own, with its own
layout, groups, bodies and selection), coloured by the diff."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QVBoxLayout, QWidget

from widgets.common.status_line import MessageLabel
from widgets.diffview.colours import PaneColours, PaneErrors
from widgets.overlays.layer import layer_for
from widgets.window.document_tab import DocumentTab

__all__ = ["DiffPane"]


class DiffPane(QWidget):
    """Heading + canvas of one side (``side``: "a" or "b")."""

    def __init__(self, side: str, doc, name: str, *, dark: bool, show_names: bool, options,  # noqa: ANN001
                 owns_store: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.name = name
        self.owns_store = owns_store
        self.heading = MessageLabel("", self, wrap=False)
        self.tab = DocumentTab(doc, self, dark=dark, show_names=show_names, options=options)
        # the view's own legend explains the colours: no second one floats over each pane
        layer_for(self.tab, with_legend=False)
        self.colours = PaneColours(self.tab)
        self.errors: PaneErrors | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.tab, 1)

    @property
    def doc(self):  # noqa: ANN201
        return self.tab.doc

    def set_heading(self, counts: str) -> None:
        letter = self.side.upper()
        self.heading.setText(f"<b>{letter}</b>&nbsp; {escape(self.name)} &nbsp;<span style='color:#8a8f98'>"
                             f"{escape(counts)}</span>")

    def show_errors(self, comparison) -> int:  # noqa: ANN001
        """The compare heat map instead of the diff colours (``None``: back to colours);
        the number of this side's nodes with an error cell."""
        if comparison is None:
            if self.errors is not None:
                self.errors.set_visible(False)
            self.colours.set_visible(True)
            return 0
        if self.errors is None:
            self.errors = PaneErrors(self.tab, self.side)
        self.errors.set_comparison(comparison)
        self.colours.set_visible(False)
        self.errors.set_visible(True)
        return self.errors.cell_count()

    def close_pane(self) -> None:
        """Stop the canvas's background work; release the model's files when they are ours
        (a snapshot of an open tab reads that tab's external data: never closed here)."""
        self.colours.detach()
        if self.errors is not None:
            self.errors.set_visible(False)
        self.tab.close_document(release_store=self.owns_store)
