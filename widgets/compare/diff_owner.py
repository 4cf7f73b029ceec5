"""The Diff dock says whose comparison it shows.

A comparison belongs to the tab it was started from (A) and the model it was compared
with (B). When the user switches to any other tab (or extracts a selection into a new
one), the list still describes A: the dock's title and a line at its top then say so in
plain words, "Comparison of a.onnx (other tab)", with a button that goes back to A.
While A or B is the current tab they are hidden and the dock reads as before.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from widgets.common.status_line import MessageLabel
from widgets.common.formatting import shown


def _alive(tab) -> bool:
    return tab is not None and shiboken6.isValid(tab)


class DiffOwnership(QWidget):
    """The banner inside the Diff panel; see module docstring."""

    def __init__(self, window, dock) -> None:
        super().__init__(dock.panel)
        self.window_ = window
        self.dock = dock
        self.label = MessageLabel("", self)
        self.button = QPushButton("Show That Tab", self)
        self.button.setToolTip("Switch to the tab this comparison was made for")
        self.button.clicked.connect(self.show_owner)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 4)
        row.addWidget(self.label, 1)
        row.addWidget(self.button)
        dock.panel.layout().insertWidget(0, self)
        self.hide()
        window.tabs.currentChanged.connect(self.update_state)
        # after the dock took a finished comparison in (or dropped one)
        dock._relay.done.connect(self.update_state)
        dock._relay.failed.connect(self.update_state)
        self.update_state()

    def owner_name(self) -> str:
        tab = self.dock.tab_a
        return shown(tab.title().rstrip("*")) if _alive(tab) else ""

    def is_foreign(self) -> bool:
        """Whether the comparison on show belongs to a tab other than the current one."""
        a, b = self.dock.tab_a, self.dock.tab_b
        if not _alive(a):
            return False
        current = self.window_.current_tab()
        return current is not a and current is not b

    def update_state(self, *_args) -> None:
        if self.is_foreign():
            name = self.owner_name()
            self.label.setText(f"<b>Comparison of {name}</b> (other tab): this list does not describe "
                               f"the model on screen.")
            self.dock.setWindowTitle(f"Diff — comparison of {name} (other tab)")
            self.show()
        else:
            self.dock.setWindowTitle("Diff")
            self.hide()

    def show_owner(self) -> None:
        tab = self.dock.tab_a
        if _alive(tab):
            self.window_.tabs.setCurrentWidget(tab)


def install_diff_owner(window) -> DiffOwnership | None:
    dock = getattr(window, "compare_dock", None)
    if dock is None:
        return None
    window.diff_owner = DiffOwnership(window, dock)
    return window.diff_owner
