"""Edit menu: undo and redo (their titles name the command), select all, find.

Cut, copy and paste are the clipboard feature's (:mod:`widgets.editing.actions_clipboard`)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from widgets.actions.registry import ActionSpec

K = QKeySequence.StandardKey


def register(window) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731

    def stack():
        tab = window.current_tab()
        return tab.doc.stack if tab is not None else None

    window.registry.add_all([
        ActionSpec("edit.undo", "&Undo", lambda: undo(window), K.Undo, "Edit", "1_history",
                   enabled_when=lambda: bool(stack() and stack().can_undo)),
        ActionSpec("edit.redo", "&Redo", lambda: redo(window), K.Redo, "Edit", "1_history",
                   enabled_when=lambda: bool(stack() and stack().can_redo)),
        ActionSpec("edit.select_all", "Select &All", lambda: select_all(window), K.SelectAll, "Edit", "3_select",
                   enabled_when=has_tab),
        ActionSpec("edit.find", "&Find…", window.show_find, K.Find, "Edit", "3_select", enabled_when=has_tab),
        # (the Find panel comes after the first picture: asked for then)
        ActionSpec("edit.find_next", "Find &Next", lambda: window.find_panel.next(), K.FindNext, "Edit", "3_select"),
        ActionSpec("edit.find_previous", "Find &Previous", lambda: window.find_panel.previous(), K.FindPrevious,
                   "Edit", "3_select"),
    ])


def update_history(window) -> None:
    """Undo/Redo say what they would undo or redo."""
    tab = window.current_tab()
    stack = tab.doc.stack if tab is not None else None
    reg = window.registry
    reg.refresh("edit.undo")
    reg.refresh("edit.redo")
    can_undo, can_redo = bool(stack and stack.can_undo), bool(stack and stack.can_redo)
    reg.action("edit.undo").setText(f"&Undo {stack.undo_label}" if can_undo else "&Undo")
    reg.action("edit.redo").setText(f"&Redo {stack.redo_label}" if can_redo else "&Redo")


def undo(window) -> None:
    tab = window.current_tab()
    if tab is not None and tab.doc.stack.can_undo:
        tab.doc.undo()


def redo(window) -> None:
    tab = window.current_tab()
    if tab is not None and tab.doc.stack.can_redo:
        tab.doc.redo()


def select_all(window) -> None:
    tab = window.current_tab()
    if tab is not None:
        tab.canvas.view.select_keys(list(tab.canvas.scene.node_items()), center=False)
