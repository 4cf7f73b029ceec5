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

Context menus are registry data too. A spec lists the context menus it belongs to
(``contexts``); :meth:`ActionRegistry.fill` builds one for a target (the box or edge under
the cursor). Entries that depend on the target (one per input of the node, one per weight,
one per open group) come from a spec's ``choices``: each is an *instance* of that spec, a
QAction bound to one argument, so even those entries belong to a declared action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from PySide6.QtCore import QObject, Qt, Signal
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
    #: the section in context menus (default: ``section``)
    context_section: str | None = None
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
    #: entries bound to an argument: ``choices(target) -> [(title, argument), ...]``; each
    #: entry runs ``run(argument)``. In a menu the action shows as a submenu of them.
    choices: Callable[[Any], list[tuple[str, Any]]] | None = None
    #: in a context menu the choices go into the menu itself rather than a submenu
    inline: bool = False
    #: each choice opens a submenu of this context's actions, bound to the choice
    submenu_context: str | None = None
    #: in a context menu: shown only when this holds for the target
    visible_when: Callable[[Any], bool] | None = None
    #: in a context menu: run with the target (``run(target)``) rather than with nothing
    takes_target: bool = False
    #: an instance bound to ``argument`` is enabled when ``enabled_for(argument)`` holds
    enabled_for: Callable[[Any], bool] | None = None
    #: an instance bound to ``argument`` is checkable and checked when this holds
    checked_for: Callable[[Any], bool] | None = None
    #: a checkable action's checked state is read from here on refresh (state kept elsewhere)
    checked_when: Callable[[], bool] | None = None

    @property
    def bound(self) -> bool:
        """Whether the action needs an argument (a choice or a context target) to run."""
        return self.choices is not None or self.takes_target

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
        #: each menu's sections and their actions, in placing order
        self._layout: dict[int, dict[str, list[QAction]]] = {}
        self._menu_sections: dict[str, str] = {}
        #: submenus made of a spec's choices (menu id -> spec id)
        self._choice_menus: dict[int, str] = {}
        #: user key bindings that replace a spec's default (loaded from settings)
        self._keys: dict[str, str | None] = {}

    #: an action was declared or rebound (the palette and the shortcut editor re-read)
    changed = Signal()

    # -- declaring --------------------------------------------------------------------------
    def add(self, spec: ActionSpec, *, action: QAction | None = None) -> QAction:
        """Create the spec's QAction and place it in its menu; ids are unique.

        ``action``: adopt a QAction Qt already made (a dock's toggle-view action) instead
        of creating one; the spec then describes it and ``run`` is not connected."""
        if spec.id in self._specs:
            raise ValueError(f"action {spec.id!r} is declared twice")
        adopted = action is not None
        if action is None:
            action = QAction(spec.title, self.window)
        else:
            action.setText(spec.title)
        action.setObjectName(spec.id)
        action.setData(spec.id)
        if spec.tip:
            action.setStatusTip(spec.tip)
            action.setToolTip(spec.tip)
        self._set_keys(action, (self._keys[spec.id] or None) if spec.id in self._keys else spec.shortcut)
        action.setShortcutContext(spec.shortcut_context)
        if adopted:
            pass
        elif spec.checkable:
            action.setCheckable(True)
            action.setChecked(spec.checked)
            action.toggled.connect(spec.run)
        elif not spec.bound:
            action.triggered.connect(lambda _checked=False, fn=spec.run: fn())
        # the window owns the action so its shortcut works even when no menu shows it
        self.window.addAction(action)
        self._specs[spec.id] = spec
        self._actions[spec.id] = action
        if spec.menu:
            if spec.choices is not None:
                sub = self.menu(spec.menu + "/" + spec.plain_title, spec.section)
                self._choice_menus[id(sub)] = spec.id
                sub.aboutToShow.connect(lambda sid=spec.id: self.refill(sid))
                self.refill(spec.id)
            else:
                self._place(self.menu(spec.menu), action, spec.section)
        self._refresh_one(spec)
        self.changed.emit()
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
        """Put ``action`` into ``menu`` at the end of its section.

        Sections are ordered by name (``"1_open"`` before ``"2_save"``, as VS Code orders
        menu groups), so features that register at different times still produce one
        stable menu; a separator goes between sections."""
        sections = self._layout.setdefault(id(menu), {})
        sections.setdefault(section, []).append(action)
        for act in list(menu.actions()):
            menu.removeAction(act)
            if act.isSeparator() and act.parent() is menu:
                act.deleteLater()
        for i, name in enumerate(sorted(sections)):
            if i:
                menu.addSeparator()
            menu.addActions(sections[name])
        if id(menu) in self._choice_menus:  # its bound entries were taken out above
            self.refill(self._choice_menus[id(menu)])

    def menu(self, path: str, section: str | None = None) -> QMenu:
        """The menu at ``path`` (``"Graph/Clean Up"``), created on first use; a new
        submenu goes into ``section`` of its parent (default: the section declared for
        it with :meth:`declare_menu`, else the last one, ``"9"``).

        Titles match without their ``&``; a new menu gets an ``&`` on its first letter."""
        parts = [p for p in path.split("/") if p]
        bar = self.window.menuBar()
        container: QMenu | None = None
        found: QMenu | None = None
        for depth, part in enumerate(parts):
            found = None
            holder = bar if container is None else container
            for act in holder.actions():
                sub = act.menu()
                if sub is not None and act.text().replace("&", "") == part:
                    found = sub
                    break
            if found is None:
                if container is None:
                    found = bar.addMenu("&" + part)
                else:
                    found = QMenu("&" + part, container)
                    sub_path = "/".join(parts[:depth + 1])
                    where = section if section is not None and sub_path == path else self._menu_sections.get(sub_path, "9")
                    self._place(container, found.menuAction(), where)
            container = found
        assert found is not None, "an empty menu path"
        return found

    def declare_menu(self, path: str, section: str) -> QMenu:
        """Say which section of its parent the submenu ``path`` goes into, and create it."""
        self._menu_sections[path] = section
        return self.menu(path)

    def order_menubar(self, order: Iterable[str]) -> None:
        """Top-level menus in ``order`` (titles without ``&``); others keep their order
        before the last one named (Help stays last)."""
        order = list(order)
        bar = self.window.menuBar()
        actions = list(bar.actions())

        def rank(action) -> float:
            title = action.text().replace("&", "")
            return order.index(title) if title in order else len(order) - 1.5

        for action in actions:
            bar.removeAction(action)
        for action in sorted(actions, key=rank):
            bar.addAction(action)

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
        """Whether ``action`` is one of the registry's (menus hold no other kind): a
        spec's own action, or an instance of a spec bound to one argument."""
        spec_id = action.data() if isinstance(action.data(), str) else ""
        if spec_id not in self._specs:
            return False
        return self._actions[spec_id] is action or bool(action.property("registry_instance"))

    # -- bound entries: choices and context menus ---------------------------------------------
    def instance(self, spec_id: str, argument: Any, parent: QObject, title: str | None = None) -> QAction:
        """A QAction that runs ``spec_id`` with ``argument`` (an entry of a dynamic menu)."""
        spec = self._specs[spec_id]
        action = QAction(spec.title if title is None else title, parent)
        action.setData(spec_id)
        action.setProperty("registry_instance", True)
        if spec.tip:
            action.setStatusTip(spec.tip)
        if spec.checked_for is not None:
            action.setCheckable(True)
            action.setChecked(bool(spec.checked_for(argument)))
        if spec.enabled_for is not None:
            action.setEnabled(bool(spec.enabled_for(argument)))
        action.triggered.connect(lambda _checked=False, fn=spec.run, arg=argument: fn(arg))
        return action

    def refill(self, spec_id: str) -> QMenu:
        """Rebuild the submenu of a menu-placed spec with ``choices`` (its entries first;
        actions placed in the same submenu by other specs stay after them)."""
        spec = self._specs[spec_id]
        assert spec.menu is not None and spec.choices is not None
        sub = self.menu(spec.menu + "/" + spec.plain_title)
        for act in list(sub.actions()):
            if act.property("registry_instance") or act.property("registry_choice_separator"):
                sub.removeAction(act)
                act.deleteLater()
        first = sub.actions()[0] if sub.actions() else None
        entries = list(spec.choices(None))
        for title, argument in entries:
            sub.insertAction(first, self.instance(spec_id, argument, sub, title))
        if entries and first is not None:
            sep = sub.insertSeparator(first)
            sep.setProperty("registry_choice_separator", True)
        return sub

    def fill(self, menu: QMenu, context: str, target: Any = None) -> QMenu:
        """Add the actions of context menu ``context`` for ``target`` to ``menu``."""
        last: str | None = None
        def section(spec: ActionSpec) -> str:
            return spec.section if spec.context_section is None else spec.context_section

        specs = sorted((s for s in self.specs() if context in s.contexts), key=section)
        for spec in specs:
            if spec.visible_when is not None and not spec.visible_when(target):
                continue
            if spec.choices is not None:
                entries = list(spec.choices(target))
                if not entries:
                    continue
                if last is not None and section(spec) != last and menu.actions():
                    menu.addSeparator()
                last = section(spec)
                if spec.inline:
                    for title, argument in entries:
                        menu.addAction(self.instance(spec.id, argument, menu, title))
                    continue
                sub = menu.addMenu(spec.title)
                for title, argument in entries:
                    if spec.submenu_context:
                        self.fill(sub.addMenu(title), spec.submenu_context, argument)
                    else:
                        sub.addAction(self.instance(spec.id, argument, sub, title))
            else:
                if last is not None and section(spec) != last and menu.actions():
                    menu.addSeparator()
                if spec.takes_target:
                    menu.addAction(self.instance(spec.id, target, menu))
                else:
                    self._refresh_one(spec)
                    menu.addAction(self._actions[spec.id])
            last = section(spec)
        return menu

    # -- state ------------------------------------------------------------------------------
    def refresh(self, prefix: str = "") -> None:
        """Re-evaluate enablement (call on tab, selection or document change); ``prefix``
        limits it to one feature's ids (``"run."``) or one action (its whole id)."""
        if prefix in self._specs:  # one action: after every edit, not a walk over hundreds
            self._refresh_one(self._specs[prefix])
            return
        for spec in self._specs.values():
            if spec.id.startswith(prefix):
                self._refresh_one(spec)

    def _refresh_one(self, spec: ActionSpec) -> None:
        action = self._actions[spec.id]
        if spec.enabled_when is not None:
            try:
                enabled = bool(spec.enabled_when())
            except Exception:  # a condition must never break the window; off is the safe answer
                enabled = False
            action.setEnabled(enabled)
        if spec.checked_when is not None and action.isCheckable():
            checked = bool(spec.checked_when())
            if checked != action.isChecked():
                action.blockSignals(True)  # mirror the state; do not run the action again
                action.setChecked(checked)
                action.blockSignals(False)

    def is_enabled(self, action_id: str) -> bool:
        spec = self._specs[action_id]
        self._refresh_one(spec)
        return self._actions[action_id].isEnabled()

    def run(self, action_id: str) -> None:
        """Run an action as its menu entry would (checkable ones toggle)."""
        self._actions[action_id].trigger()

    def shortcut(self, action_id: str) -> str:
        """The action's current key(s), portable text, ``", "`` between alternatives."""
        return ", ".join(seq.toString(QKeySequence.SequenceFormat.PortableText)
                         for seq in self._actions[action_id].shortcuts() if not seq.isEmpty())

    def default_shortcut(self, action_id: str) -> str:
        keys = self._specs[action_id].shortcut
        if keys is None:
            return ""
        if isinstance(keys, QKeySequence.StandardKey):
            return ", ".join(s.toString(QKeySequence.SequenceFormat.PortableText)
                             for s in QKeySequence.keyBindings(keys))
        return QKeySequence(keys).toString(QKeySequence.SequenceFormat.PortableText)

    def set_shortcut(self, action_id: str, keys: str | None) -> None:
        """Rebind an action (``None``: its default; ``""``: no key).

        Also accepted before the action is declared (bindings loaded from settings)."""
        if keys is None:
            self._keys.pop(action_id, None)
        else:
            self._keys[action_id] = keys
        spec = self._specs.get(action_id)
        if spec is not None:
            self._set_keys(self._actions[action_id], spec.shortcut if keys is None else (keys or None))
            self.changed.emit()

    def custom_shortcuts(self) -> dict[str, str]:
        """The user's bindings that differ from the defaults (what settings store)."""
        return {k: v or "" for k, v in self._keys.items()}

    def conflicts(self) -> dict[str, list[str]]:
        """Key sequences bound to more than one action: ``{"Ctrl+S": ["file.save", ...]}``."""
        seen: dict[str, list[str]] = {}
        for spec_id, action in self._actions.items():
            for seq in action.shortcuts():
                text = seq.toString(QKeySequence.SequenceFormat.PortableText)
                if text:
                    seen.setdefault(text, []).append(spec_id)
        return {k: v for k, v in seen.items() if len(v) > 1}
