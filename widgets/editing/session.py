"""Documents of the :class:`~widgets.editing.controller.EditingController`: new models,
Save As with options, the Save / Discard / Cancel prompt on close, crash recovery."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QTimer

from editor.document import Document
from editor.errors import StudioError
from editor.recovery import RecoveryStore
from editor.validation import Validator
from widgets.editing.recovery import RecoveryDialog
from widgets.editing.save import CANCEL, DISCARD, SAVE, SaveAsDialog, ask_unsaved, confirm_invalid_save


class SessionEdits:
    """Mixin of the controller (``self.window``, ``self.hooks``, ``self.run_dialog`` ...)."""

    def new_model(self):
        return self.open_document(Document.new())

    def open_document(self, doc):
        """Show ``doc`` (a new or recovered document) in a tab of its own."""
        validator = Validator(doc)
        validator.validate_all()
        self.window.add_document(doc, validator)
        self.sync()
        return self._tab()

    # -- saving / closing -------------------------------------------------------------------
    def save_as_with_options(self, dialog: SaveAsDialog | None = None) -> bool:
        tab = self._tab()
        if tab is None:
            return False
        dialog = dialog or SaveAsDialog(tab.doc, self.window)
        if not self.run_dialog(dialog):
            return False
        return self.save_doc(tab.doc, dialog.path(), dialog.options())

    def save_doc(self, doc, path=None, options=None) -> bool:
        tab = next((t for t in self.window.tab_list() if t.doc is doc), None)
        if tab is not None and not confirm_invalid_save(self.window, tab):
            return False
        try:
            doc.save(path, options=options)
        except StudioError as exc:
            self._refuse(exc.message)
            return False
        self.window.statusBar().showMessage(f"Saved {doc.path.name}", 3000)
        return True

    def confirm_close(self, tabs=None, ask=None) -> bool:
        """Ask Save / Discard / Cancel about every document of ``tabs`` (default: all) that
        holds unsaved work (modified, or made here and never saved: see
        ``MainWindow.add_document``); True to go on closing. ``ask(parent, names)`` returns
        one answer per name, or CANCEL (default: :func:`~widgets.editing.save.ask_unsaved`,
        one question for all of them).

        A Save that fails or is cancelled (Save As of an Untitled model) stops the close
        with nothing discarded."""
        ask = ask or self.ask_unsaved
        unsaved = [tab for tab in (self.window.tab_list() if tabs is None else tabs) if tab.doc.is_modified]
        if not unsaved:
            return True
        answers = ask(self.window, [tab.title().rstrip("*") for tab in unsaved])
        if answers == CANCEL:
            return False
        plan = list(zip(unsaved, answers))
        for tab, answer in plan:
            if answer == SAVE:
                if tab.doc.path is None:
                    self.window.tabs.setCurrentWidget(tab)
                    if not self.save_as_with_options():
                        return False
                elif not self.save_doc(tab.doc):
                    return False
        for tab, answer in plan:
            if answer == DISCARD:
                # the user chose to lose these edits: the window's own close check and the
                # recovery writer treat the document as settled
                tab.doc.stack.set_clean()
                hooks = self.hooks.get(id(tab))
                if hooks is not None and hooks.recovery is not None:
                    hooks.recovery.close()
        return True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if obj is self.window and event.type() == QEvent.Type.Close:
            if not self.confirm_close():
                event.ignore()
                return True
            for hooks in self.hooks.values():
                if hooks.recovery is not None:
                    hooks.recovery.close()
        return False

    def ask_unsaved(self, parent, names: list[str]) -> list[str] | str:
        return ask_unsaved(parent, names)

    # -- recovery ---------------------------------------------------------------------------
    def enable_recovery(self, store: RecoveryStore, *, offer: bool = True) -> None:
        """Start writing recovery copies to ``store`` (tabs opened from now on) and, with
        ``offer``, offer what a crashed session left there once the event loop runs."""
        self.recovery_store = store
        if offer:
            QTimer.singleShot(0, self.offer_recovery)

    def offer_recovery(self, choose=None) -> list:
        """On start-up: offer the recovery copies left by a crash; restore the chosen ones
        as modified documents, delete the rest."""
        if self.recovery_store is None:
            return []
        entries = self.recovery_store.entries()
        if not entries:
            return []
        if choose is None:
            dialog = RecoveryDialog(entries, self.window)
            chosen = dialog.chosen() if self.run_dialog(dialog) else []
        else:
            chosen = choose(entries)
        restored = []
        for entry in entries:
            if entry in chosen:
                try:
                    doc = entry.open()
                except StudioError as exc:
                    self._refuse(exc.message)
                    continue
                # NOTE: the restored model differs from the file on disk: it starts dirty
                doc.stack.clean_index = None
                tab = self.open_document(doc)
                restored.append(tab)
            self.recovery_store.remove(entry)
        return restored
