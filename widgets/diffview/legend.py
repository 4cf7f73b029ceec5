"""The colours explained: one chip per status with what it means and how many nodes of
each side have it."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from editor.diff.display import LEGEND

__all__ = ["Legend"]


class Legend(QWidget):
    """A row of chips: ■ changed 3 / 3 ..."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chips: dict[str, QLabel] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(10)
        for entry in LEGEND:
            chip = QLabel(self)
            chip.setTextFormat(Qt.TextFormat.RichText)
            chip.setToolTip(f"{entry.label}: {entry.meaning}")
            self.chips[entry.status] = chip
            row.addWidget(chip)
        self.set_counts({}, dark=False)

    def set_counts(self, counts: dict[str, int], *, dark: bool) -> None:
        """``counts``: DiffDisplay.counts() ("a_changed", "b_changed", ...)."""
        for entry in LEGEND:
            colour = entry.colour_dark if dark else entry.colour
            a, b = counts.get(f"a_{entry.status}"), counts.get(f"b_{entry.status}")
            numbers = "" if a is None else f" {a}" if entry.status == "removed" else \
                f" {b}" if entry.status == "added" else f" {a}/{b}"
            self.chips[entry.status].setText(
                f"<span style='color:{colour}; font-size:14px'>■</span> {escape(entry.label)}{numbers}")

    def text(self) -> str:
        return " ".join(chip.text() for chip in self.chips.values())
