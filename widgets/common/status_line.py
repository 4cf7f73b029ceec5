"""Status and message text that can never widen the window.

A plain QLabel asks for its whole text as its minimum width (rich text or not, wrapped
or not when one word is long): one Run dock status line ("Ran on onnxruntime · CPU ·
43.7 ms · 387: shape contradicts the model: declared [1,seqlen] (rank 2), got [16,1,8210]
(rank 3) · onnxruntime warning: …") once made a 1,600-pixel screen's window 2,510 pixels
wide, with Properties and History off screen. Two widgets replace such labels:

- :class:`StatusLine`: one line of parts, each with a tone (error, warning, muted ...),
  drawn left to right and cut with "…" where the room ends. The whole text is the tool
  tip, and a "Details" button (shown only when something is cut) opens it in a window of
  its own, selectable. Plain text: nothing in a message is read as HTML.
- :class:`MessageLabel`: a wrapped label for messages and headings. It wraps to the width
  it gets and asks for no more than a few words' width, so a long path or name is cut at
  the edge (the whole text on hover) instead of pushing the window wider.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["MessageBanner", "MessageLabel", "Part", "StatusLine", "TONES", "show_details"]

#: the colours of a part's tone (None: the palette's text colour)
TONES: dict[str | None, QColor | None] = {
    None: None,
    "strong": None,
    "error": QColor("#c0392b"),
    "warning": QColor("#b9770e"),
    "muted": QColor("#808080"),
    "note": None,
}
SEPARATOR = " · "
#: a status line or message never asks for more width than this many average characters
MIN_CHARS = 6


@dataclass(frozen=True)
class Part:
    """One piece of a status line: its text and tone ("strong" is bold, "note" italic)."""

    text: str
    tone: str | None = None


def _parts(parts) -> list[Part]:  # noqa: ANN001
    if isinstance(parts, str):
        return [Part(parts)] if parts else []
    out = []
    for p in parts:
        if isinstance(p, Part):
            out.append(p)
        elif isinstance(p, str):
            out.append(Part(p))
        else:
            out.append(Part(*p))
    return [p for p in out if p.text]


class StatusLine(QWidget):
    """One elided line of status parts; see the module docstring.

    ``set_parts(["Ran on onnxruntime", ("2 warnings", "warning")])`` or ``setText(plain)``;
    ``text()`` is the whole line as plain text (what the tool tip and Details show)."""

    #: the Details button was pressed (the full text is shown in a window)
    detailsShown = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, title: str = "Details") -> None:
        super().__init__(parent)
        self._parts: list[Part] = []
        self._title = title
        self._cut = False
        self.details_window: QDialog | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.details_button = QToolButton(self)
        self.details_button.setText("Details")
        self.details_button.setAutoRaise(True)
        self.details_button.setToolTip("Show the whole message")
        self.details_button.clicked.connect(self.show_details)
        self.details_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addStretch(1)
        layout.addWidget(self.details_button)

    # -- content -----------------------------------------------------------------------------
    def set_parts(self, parts) -> None:  # noqa: ANN001
        """``parts``: a string, or a list of strings, :class:`Part` or ``(text, tone)``."""
        self._parts = _parts(parts)
        self.setToolTip(self.details_text())
        self.updateGeometry()
        self._update_cut()
        self.update()

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel's name, so the swap is plain
        self.set_parts(text)

    def clear(self) -> None:
        self.set_parts([])

    def parts(self) -> list[Part]:
        return list(self._parts)

    def text(self) -> str:
        return SEPARATOR.join(p.text for p in self._parts)

    def details_text(self) -> str:
        """The whole text, one part per line (long status lines read better that way)."""
        return "\n".join(p.text for p in self._parts)

    @property
    def is_cut(self) -> bool:
        """True while the line does not fit and ends in "…"."""
        return self._cut

    def show_details(self) -> QDialog:
        self.details_window = show_details(self, self._title, self.details_text(), self.details_window)
        self.detailsShown.emit(self.text())
        return self.details_window

    # -- geometry ----------------------------------------------------------------------------
    def _full_width(self) -> int:
        fm = self.fontMetrics()
        bold = QFontMetrics(self._font_for("strong"))
        width = 0
        for i, p in enumerate(self._parts):
            width += (bold if p.tone == "strong" else fm).horizontalAdvance(p.text)
            if i:
                width += fm.horizontalAdvance(SEPARATOR)
        return width

    def sizeHint(self) -> QSize:  # noqa: N802
        fm = self.fontMetrics()
        return QSize(min(self._full_width(), fm.averageCharWidth() * 60) + 4,
                     max(fm.height() + 4, self.details_button.sizeHint().height()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.fontMetrics().averageCharWidth() * MIN_CHARS, self.sizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        self._update_cut()

    def _room(self, with_button: bool) -> int:
        room = self.contentsRect().width()
        if with_button:
            room -= self.details_button.sizeHint().width() + 4
        return max(room, 0)

    def _update_cut(self) -> None:
        self._cut = any("\n" in p.text for p in self._parts) or self._full_width() > self._room(False)
        self.details_button.setVisible(self._cut)

    # -- painting ----------------------------------------------------------------------------
    def _font_for(self, tone: str | None) -> QFont:
        font = QFont(self.font())
        if tone == "strong":
            font.setBold(True)
        elif tone == "note":
            font.setItalic(True)
        return font

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        rect = self.contentsRect()
        room = self._room(self._cut)
        x = rect.left()
        base = self.palette().color(self.foregroundRole())
        muted = TONES["muted"]
        y = rect.top() + (rect.height() + self.fontMetrics().ascent() - self.fontMetrics().descent()) // 2
        for i, p in enumerate(self._parts):
            pieces = [(SEPARATOR, muted, self.font())] if i else []
            pieces.append((p.text.replace("\n", " "), TONES.get(p.tone) or base, self._font_for(p.tone)))
            for text, colour, font in pieces:
                fm = QFontMetrics(font)
                left = room - (x - rect.left())
                width = fm.horizontalAdvance(text)
                if width > left:
                    text = fm.elidedText(text, Qt.TextElideMode.ElideRight, max(left, 0))
                    width = left
                painter.setFont(font)
                painter.setPen(colour)
                painter.drawText(x, y, text)
                x += width
                if x - rect.left() >= room:
                    return


class MessageLabel(QLabel):
    """A wrapped label that never asks for more than a few words' width (see the module
    docstring). Rich or plain text as QLabel; the whole text on hover when it is long.
    ``wrap=False``: one line, cut at the edge (for lines a short dock must not squeeze)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, min_chars: int = MIN_CHARS,
                 wrap: bool = True, max_lines: int = 0) -> None:
        super().__init__(parent)
        self._min_chars = min_chars
        self._max_lines = max_lines
        self.setWordWrap(wrap)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802
        super().setText(text)
        plain = text
        # NOTE: rich text of 60 characters or fewer is no longer as plain text: no tooltip and
        # no HTML parse (Properties' title, set after every edit, paid a QTextDocument each time)
        if len(text) > 60 and (self.textFormat() == Qt.TextFormat.RichText or (
                self.textFormat() == Qt.TextFormat.AutoText and "<" in text and ">" in text)):
            doc = QTextDocument()
            doc.setHtml(text)
            plain = doc.toPlainText()
        tip = plain if len(plain) > 60 else ""
        if tip != self.toolTip():
            self.setToolTip(tip)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        hint = super().minimumSizeHint()
        width = min(hint.width(), self.fontMetrics().averageCharWidth() * self._min_chars)
        if not self.wordWrap():
            return QSize(width, hint.height())
        # NOTE: the height the text takes at an ordinary width, not at the few characters
        # the label may shrink to: that height (a word per line) made the Run dock's banner
        # ask for 266 pixels, and the dock scrolled
        height = self.heightForWidth(self.fontMetrics().averageCharWidth() * 60)
        return QSize(width, min(max(height, self.fontMetrics().height()), self._most_height()))

    def _most_height(self) -> int:
        """With ``max_lines``: the height of that many lines (the rest is cut, see
        :meth:`is_cut`); else no limit."""
        if not self._max_lines:
            return 1 << 24
        margins = self.contentsMargins()
        return self.fontMetrics().lineSpacing() * self._max_lines + margins.top() + margins.bottom() + 2

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return min(super().heightForWidth(width), self._most_height())

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = super().sizeHint()
        return QSize(min(hint.width(), self.fontMetrics().averageCharWidth() * 60), min(hint.height(), self._most_height()))

    def is_cut(self) -> bool:
        """True when ``max_lines`` hides part of the text."""
        return bool(self._max_lines) and super().heightForWidth(max(self.width(), 1)) > self._most_height()



class MessageBanner(QWidget):
    """A message box inside a panel: plain text, at most ``max_lines`` lines (an error
    with a traceback once made the Run dock ask for 600 pixels), the whole text on hover
    and behind its Details button. ``setText``/``text``/``setStyleSheet`` as a QLabel."""

    def __init__(self, parent: QWidget | None = None, *, max_lines: int = 4, title: str = "Message") -> None:
        super().__init__(parent)
        self._title = title
        self.details_window: QDialog | None = None
        self.label = MessageLabel("", self, max_lines=max_lines)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QToolButton(self)
        self.details_button.setText("Details")
        self.details_button.setAutoRaise(True)
        self.details_button.clicked.connect(self.show_details)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)

    def setText(self, text: str) -> None:  # noqa: N802
        self.label.setText(text)
        self.label.setToolTip(text if len(text) > 60 else "")
        self._update_button()

    def text(self) -> str:
        return self.label.text()

    def textFormat(self) -> Qt.TextFormat:  # noqa: N802
        return self.label.textFormat()

    def setStyleSheet(self, sheet: str) -> None:  # noqa: N802
        self.label.setStyleSheet(sheet)

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001
        super().resizeEvent(event)
        self._update_button()

    def _update_button(self) -> None:
        self.details_button.setVisible(self.label.is_cut() or "\n" in self.label.text().strip())

    def show_details(self) -> QDialog:
        self.details_window = show_details(self, self._title, self.label.text(), self.details_window)
        return self.details_window


def show_details(parent: QWidget, title: str, text: str, window: QDialog | None = None) -> QDialog:
    """A window (not modal) with ``text`` selectable; ``window`` is reused when still open."""
    if window is None:
        window = QDialog(parent)
        window.setWindowTitle(title)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        layout = QVBoxLayout(window)
        window.text_view = QPlainTextEdit(window)
        window.text_view.setReadOnly(True)
        window.text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout.addWidget(window.text_view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, window)
        buttons.rejected.connect(window.close)
        layout.addWidget(buttons)
        window.resize(640, 260)
    window.text_view.setPlainText(text)
    window.show()
    window.raise_()
    return window
