"""The command palette (Ctrl+Shift+P): type a few letters of any action, Enter runs it.

Every action of the registry is listed with its menu place and its key, enabled ones
first; entries of menus made of choices (Open Recent, Theme) are listed one by one.
Matching is fuzzy in the way editors' palettes are: the typed letters must appear in
order; a match at the start of a word, or letters that follow each other, rank higher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QHeaderView, QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from widgets.actions.registry import ActionRegistry, ActionSpec


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (higher is better), None when it does not.

    Every character of the query must appear in the text in order (case-insensitive).
    Each matched character scores 1, plus 2 at the start of a word and 1 right after the
    previous match; a shorter text wins a tie."""
    q = query.lower().replace(" ", "")
    t = text.lower()
    score, pos, last = 0.0, 0, -2
    for k, ch in enumerate(q):
        found = t.find(ch, pos)
        if found < 0:
            return None
        if found != last + 1:  # not a run: take a word start further on if the rest still fits
            for i in range(found, len(t)):
                if t[i] == ch and (i == 0 or not t[i - 1].isalnum()) and _in_order(q[k + 1:], t, i + 1):
                    found = i
                    break
        word_start = found == 0 or not t[found - 1].isalnum()
        score += 1 + (2 if word_start else 0) + (1 if found == last + 1 else 0)
        last, pos = found, found + 1
    return score - len(t) / 1000


def _in_order(chars: str, text: str, start: int) -> bool:
    pos = start
    for ch in chars:
        pos = text.find(ch, pos) + 1
        if pos == 0:
            return False
    return True


@dataclass
class Entry:
    """One line of the palette."""

    spec: ActionSpec
    title: str
    #: where it lives (``"File"``, ``"View › Boxes Show"``), for the reader
    where: str
    keys: str
    enabled: bool
    argument: Any = None
    bound: bool = False

    @property
    def haystack(self) -> str:
        return f"{self.title} {self.where} {self.spec.keywords}"

    def run(self, registry: ActionRegistry) -> None:
        if self.bound:
            self.spec.run(self.argument)
        else:
            registry.run(self.spec.id)


def entries(registry: ActionRegistry) -> list[Entry]:
    """Every runnable action: plain ones, and one entry per choice of a menu of choices."""
    out = []
    for spec in registry.specs():
        where = (spec.menu or "").replace("/", " › ")
        if spec.choices is not None:
            if spec.menu is None:
                continue  # context-menu choices need a target under the cursor
            for title, argument in spec.choices(None):
                out.append(Entry(spec, f"{spec.plain_title}: {title.replace('&', '')}", where, "", True, argument,
                                 bound=True))
            continue
        if spec.takes_target:
            continue
        out.append(Entry(spec, spec.plain_title, where, registry.shortcut(spec.id), registry.is_enabled(spec.id)))
    return out


def ranked(query: str, items: list[Entry]) -> list[Entry]:
    """Matching entries, enabled first, best match first, then menu order."""
    scored = []
    for i, e in enumerate(items):
        s = fuzzy_score(query, e.title)
        if s is None:
            s2 = fuzzy_score(query, e.haystack)
            if s2 is None:
                continue
            s = s2 - 100  # a match in the menu path or keywords ranks after one in the title
        scored.append((not e.enabled, -s, i, e))
    scored.sort(key=lambda x: x[:3])
    return [e for *_rest, e in scored]


class CommandPalette(QDialog):
    """A query line over the list of actions; Enter runs the current one, Esc closes."""

    def __init__(self, window) -> None:
        super().__init__(window, Qt.WindowType.Popup | Qt.WindowType.FramelessWindowHint)
        self.setObjectName("command_palette")
        self.registry: ActionRegistry = window.registry
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Type a command…")
        self.list = QTreeWidget(self)
        self.list.setColumnCount(3)
        self.list.setHeaderHidden(True)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self._all = entries(self.registry)
        self.shown: list[Entry] = []
        self.query.textChanged.connect(self.update_list)
        self.query.installEventFilter(self)
        self.list.itemActivated.connect(lambda _item, _col: self.run_current())
        self.update_list("")
        width = min(640, max(420, window.width() // 2))
        self.resize(width, 420)
        top = window.mapToGlobal(window.rect().topLeft())
        self.move(top.x() + (window.width() - width) // 2, top.y() + 60)

    def update_list(self, text: str) -> None:
        self.shown = ranked(text, self._all)
        self.list.clear()
        items = []
        for e in self.shown:
            item = QTreeWidgetItem([e.title, e.where, e.keys.split(", ")[0]])
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(0, e.spec.tip or e.title)
            if not e.enabled:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            items.append(item)
        self.list.addTopLevelItems(items)
        first = next((i for i, e in enumerate(self.shown) if e.enabled), -1)
        if first >= 0:
            self.list.setCurrentItem(self.list.topLevelItem(first))

    def current(self) -> Entry | None:
        item = self.list.currentItem()
        row = self.list.indexOfTopLevelItem(item) if item is not None else -1
        return self.shown[row] if 0 <= row < len(self.shown) else None

    def run_current(self) -> bool:
        entry = self.current()
        if entry is None or not entry.enabled:
            return False
        self.accept()
        entry.run(self.registry)
        return True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self.query and isinstance(event, QKeyEvent) and event.type() == QKeyEvent.Type.KeyPress:
            if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
                self.list.keyPressEvent(event)  # arrows move in the list while typing
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.run_current()
                return True
        return False


def show_palette(window) -> CommandPalette:
    palette = CommandPalette(window)
    palette.show()
    palette.query.setFocus()
    window.palette = palette
    return palette
