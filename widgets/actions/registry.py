"""Every action of the window, declared once as data.

An :class:`ActionSpec` says what an action is (id, title, default shortcut, where it
appears, when it is enabled, what it runs). The window's :class:`ActionRegistry` turns
each spec into one ``QAction``, puts it into its menus (found or created by title path,
e.g. ``"View/Boxes Show"``), keeps the list that context menus and the command palette
read, and re-evaluates enablement when the document or selection changes.

Why data rather than ``QAction`` calls scattered through the window: one place lists
every action, its key and its condition, so shortcuts can be rebound and checked for
conflicts, a palette can search them, and a test can prove that no menu holds an action
from anywhere else. Features register their actions from their own modules.

Shortcuts are window-wide (``Qt.WindowShortcut``) unless a spec asks otherwise: a key
reaches its action whatever widget inside the window has focus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu


@dataclass
class ActionSpec:
    """One action, as declared by the feature that owns it."""

    #: stable id, dotted by feature: ``file.save_as``, ``node.delete``, ``view.zoom_fit``
    id: str
    #: menu text with its ``&`` mnemonic
    title: str
    #: what the action does; checkable actions get the new checked state
    run: Callable[..., object]
    #: default key: a portable string (``"Ctrl+Shift+S"``) or a platform StandardKey
    shortcut: str | QKeySequence.StandardKey | None = None
    #: menu path of titles without ``&`` (``"View/Boxes Show"``); None: no menu
    menu: str | None = None
    #: actions of one section in a menu are kept together; a separator between sections
    section: str = ""
    #: context menus it appears in (``"node"``, ``"value"``, ``"canvas"``, ``"weight"``)
    contexts: tuple[str, ...] = ()
    #: enabled when this returns True (evaluated on :meth:`ActionRegistry.refresh`)
    enabled_when: Callable[[], bool] | None = None
    checkable: bool = False
    #: initial checked state (checkable actions)
    checked: bool = False
    #: one line for the status bar, tooltips and the palette
    tip: str = ""
    shortcut_context: Qt.ShortcutContext = Qt.ShortcutContext.WindowShortcut
    #: words the palette also matches (``"export picture png svg"``)
    keywords: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def plain_title(self) -> str:
        """The title as a user reads it: no mnemonic ampersand, no trailing ellipsis."""
        return self.title.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")


class ActionRegistry(QObject):
    """The window's actions: one QAction per spec, menus placed, enablement refreshed."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._specs: dict[str, ActionSpec] = {}
        self._actions: dict[str, QAction] = {}
        #: the last section placed in each menu (a separator goes between two sections)
        self._last_section: dict[int, str] = {}

    # -- declaring --------------------------------------------------------------------------
    def add(self, spec: ActionSpec) -> QAction:
        """Create the spec's QAction and place it in its menu; ids are unique."""
        if spec.id in self._specs:
            raise ValueError(f"action {spec.id!r} is declared twice")
        action = QAction(spec.title, self.window)
        action.setObjectName(spec.id)
        action.setData(spec.id)
        if spec.tip:
            action.setStatusTip(spec.tip)
            action.setToolTip(spec.tip)
        self._set_keys(action, spec.shortcut)
        action.setShortcutContext(spec.shortcut_context)
        if spec.checkable:
            action.setCheckable(True)
            action.setChecked(spec.checked)
            action.toggled.connect(spec.run)
        else:
            action.triggered.connect(lambda _checked=False, fn=spec.run: fn())
        # the window owns the action so its shortcut works even when no menu shows it
        self.window.addAction(action)
        self._specs[spec.id] = spec
        self._actions[spec.id] = action
        if spec.menu:
            self._place(self.menu(spec.menu), action, spec.section)
        return action

    def add_all(self, specs: Iterable[ActionSpec]) -> list[QAction]:
        return [self.add(spec) for spec in specs]

    @staticmethod
    def _set_keys(action: QAction, shortcut) -> None:
        if shortcut is None:
            action.setShortcuts([])
        elif isinstance(shortcut, QKeySequence.StandardKey):
            action.setShortcuts(shortcut)
        else:
            action.setShortcut(QKeySequence(shortcut))

    def _place(self, menu: QMenu, action: QAction, section: str) -> None:
        key = id(menu)
        if key in self._last_section and self._last_section[key] != section and menu.actions():
            menu.addSeparator()
        self._last_section[key] = section
        menu.addAction(action)

    def menu(self, path: str) -> QMenu:
        """The menu at ``path`` (``"Graph/Clean Up"``), created on first use.

        Titles match without their ``&``; a new menu gets an ``&`` on its first letter."""
        parts = [p for p in path.split("/") if p]
        container = self.window.menuBar()
        found: QMenu | None = None
        for part in parts:
            found = None
            for act in container.actions():
                sub = act.menu()
                if sub is not None and act.text().replace("&", "") == part:
                    found = sub
                    break
            if found is None:
                found = container.addMenu("&" + part)
            container = found
        assert found is not None, "an empty menu path"
        return found

    # -- reading ----------------------------------------------------------------------------
    def action(self, action_id: str) -> QAction:
        return self._actions[action_id]

    def spec(self, action_id: str) -> ActionSpec:
        return self._specs[action_id]

    def __contains__(self, action_id: str) -> bool:
        return action_id in self._specs

    def specs(self) -> list[ActionSpec]:
        return list(self._specs.values())

    def actions(self) -> list[QAction]:
        return list(self._actions.values())

    def for_context(self, context: str) -> list[QAction]:
        """Actions declared for a context menu, in declaration order, enablement fresh."""
        out = []
        for spec_id, spec in self._specs.items():
            if context in spec.contexts:
                self._refresh_one(spec)
                out.append(self._actions[spec_id])
        return out

    def owns(self, action: QAction) -> bool:
        """Whether ``action`` is one of the registry's (menus hold no other kind)."""
        return self._actions.get(action.data() if isinstance(action.data(), str) else "") is action

    # -- state ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-evaluate every enablement condition (call on tab, selection or document change)."""
        for spec in self._specs.values():
            self._refresh_one(spec)

    def _refresh_one(self, spec: ActionSpec) -> None:
        if spec.enabled_when is not None:
            try:
                enabled = bool(spec.enabled_when())
            except Exception:  # a condition must never break the window; off is the safe answer
                enabled = False
            self._actions[spec.id].setEnabled(enabled)

    def set_shortcut(self, action_id: str, keys: str | None) -> None:
        """Rebind an action (``None``: its default; ``""``: no key)."""
        spec = self._specs[action_id]
        self._set_keys(self._actions[action_id], spec.shortcut if keys is None else (keys or None))

    def conflicts(self) -> dict[str, list[str]]:
        """Key sequences bound to more than one action: ``{"Ctrl+S": ["file.save", ...]}``."""
        seen: dict[str, list[str]] = {}
        for spec_id, action in self._actions.items():
            for seq in action.shortcuts():
                text = seq.toString(QKeySequence.SequenceFormat.PortableText)
                if text:
                    seen.setdefault(text, []).append(spec_id)
        return {k: v for k, v in seen.items() if len(v) > 1}
