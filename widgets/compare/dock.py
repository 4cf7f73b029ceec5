"""``CompareDock``: "Compare With…", the Diff dock, canvas colours, and "Extract Selection".

One comparison at a time, anchored to the tab it started from (A). The other model (B)
is a file, or a tab that is already open; it can be opened in the tab next to A, where
its boxes are coloured by B's statuses. Clicking a change selects the node in A and its
match in B (``ModelDiff.pairs``); a node only B has is shown in B's tab.

The diff runs on a ``QThreadPool`` worker (:mod:`widgets.compare.task`) over snapshots;
results of a superseded request are dropped. Closing the dock clears the comparison and
the canvas colours.
"""

from __future__ import annotations

import itertools
from html import escape
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt, QThreadPool
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QMainWindow

from editor.errors import StudioError
from widgets.actions.registry import ActionSpec
from widgets.actions.view import register_dock
from widgets.compare.extract import extract_selection, open_new_document
from widgets.compare.overlay import CanvasDiff
from widgets.overlays.layer import clear_when_closed, untick
from widgets.compare.panel import ChangeRef, DiffPanel
from widgets.compare.task import DiffTask, SideMap, _Relay, snapshot, translate
from widgets.common.selection import Target

MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.txt);;All files (*)"
SOURCE = "diff"


def _alive(obj) -> bool:
    return obj is not None and shiboken6.isValid(obj)


class CompareDock(QDockWidget):
    """See module docstring; made by :func:`widgets.compare.install_compare`."""

    def __init__(self, window: QMainWindow, *, pool: QThreadPool | None = None) -> None:
        super().__init__("Diff", window)
        self.setObjectName("diff")  # saveState/restoreState key
        self.window_ = window
        self.panel = DiffPanel(self)
        self.setWidget(self.panel)
        self._pool = pool or QThreadPool.globalInstance()
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._tickets = itertools.count(1)
        self._ticket = 0  # the request whose answer we want (0: none)
        self._request: dict | None = None
        #: the comparison on show: A's tab, B's path / tab, the outcome in snapshot ids
        self.tab_a = None
        self.tab_b = None
        self.path_b: Path | None = None
        self.name_b = ""
        self.outcome = None
        self.map_a: SideMap | None = None
        self.map_b: SideMap | None = None
        #: the diff in the open tabs' node ids (B ids are B's tab ids once it is open)
        self.diff = None
        self.overlays: dict[int, CanvasDiff] = {}
        self._doc_a = self._doc_b = None  # the documents whose edits make the list stale
        self.stale = False
        self._watched: set[int] = set()  # ids of tabs whose destroyed signal we follow
        self.panel.changeActivated.connect(self.reveal)
        self.panel.overlayToggled.connect(self.set_overlay_visible)
        self.panel.openOtherRequested.connect(self.open_other)
        self.panel.refreshRequested.connect(self.refresh)
        window.modelShown.connect(self._on_model_shown)
        window.tabs.currentChanged.connect(self._on_current_tab)
        clear_when_closed(self, lambda: self.overlays.values())
        self._build_actions()
        self._on_current_tab()

    # -- actions and menus ---------------------------------------------------------------------
    def _build_actions(self) -> None:
        w = self.window_
        has_tab = lambda: w.current_tab() is not None  # noqa: E731
        w.registry.add_all([
            ActionSpec("tools.compare", "Compare &With…", self.compare_dialog, "Ctrl+Shift+D", "Tools", "2_compare",
                       enabled_when=has_tab, tip="Diff the current model against another model file",
                       contexts=("node", "canvas"), context_section="9_tools", keywords="diff"),
            ActionSpec("tools.extract", "E&xtract Selection to New Model", self.extract, "Ctrl+Shift+E", "Tools",
                       "2_compare", enabled_when=has_tab, contexts=("node", "canvas"), context_section="9_tools",
                       tip="Cut the selected nodes out into a new, untitled model", keywords="subgraph"),
        ])
        register_dock(w, self, "3")
        self.act_compare = w.registry.action("tools.compare")
        self.act_extract = w.registry.action("tools.extract")

    def _on_current_tab(self, *_args) -> None:
        self.window_.registry.refresh("tools.")

    # -- comparing --------------------------------------------------------------------------
    def compare_dialog(self) -> None:
        tab = self.window_.current_tab()
        if tab is None:
            return
        start = str(tab.path.parent) if tab.path is not None else self.window_.settings.last_dir()
        path, _ = QFileDialog.getOpenFileName(self.window_, "Compare With", start, MODEL_FILTER)
        if path:
            self.compare_with(path)

    def compare_with(self, other, tab=None) -> bool:
        """Diff ``tab`` (default: the current one) against ``other`` — a model path, or an
        open DocumentTab — in the background. False when there is nothing to compare."""
        tab = tab or self.window_.current_tab()
        if tab is None:
            return False
        other_tab = other if hasattr(other, "doc") else None
        path = None
        if other_tab is None:
            path = Path(other)
            resolved = path.resolve()
            # a file that is open already: diff its document as it is now (edits included)
            other_tab = next((t for t in self.window_.tab_list() if t.path is not None
                              and t.path.resolve() == resolved and t is not tab), None)
        else:
            path = other_tab.path
        if other_tab is tab:
            self._fail("cannot compare a model with itself")
            return False
        self.clear(keep_dock=True)
        ticket = next(self._tickets)
        self._ticket = ticket
        doc_a = tab.doc
        map_a = SideMap.of(doc_a)
        if other_tab is not None:
            model_b, store_b, map_b = snapshot(other_tab.doc), other_tab.doc.store, SideMap.of(other_tab.doc)
        else:
            model_b = store_b = map_b = None
        name_a = tab.title().rstrip("*")
        name_b = other_tab.title().rstrip("*") if other_tab is not None else path.name
        self._request = dict(tab_a=tab, tab_b=other_tab, path_b=path, map_a=map_a, map_b=map_b,
                             name_a=name_a, name_b=name_b)
        task = DiffTask(ticket, self._relay, snapshot(doc_a), doc_a.store, model_b, store_b,
                        None if other_tab is not None else path)
        self.show()
        self.raise_()
        self.panel.clear_message()
        self.panel.set_busy(True, f"Comparing {name_a} with {name_b}…")
        self.window_.statusBar().showMessage(f"Comparing {name_a} with {name_b}…")
        self._pool.start(task)
        return True

    def refresh(self) -> None:
        """Compare the same two models again (after edits)."""
        if self.tab_a is None or not _alive(self.tab_a):
            return
        other = self.tab_b if _alive(self.tab_b) else self.path_b
        if other is not None:
            self.compare_with(other, self.tab_a)

    @property
    def busy(self) -> bool:
        return self._request is not None

    def _on_done(self, ticket: int, outcome) -> None:
        if ticket != self._ticket or self._request is None:
            return  # superseded or cleared
        req, self._request = self._request, None
        self.panel.set_busy(False)
        if not _alive(req["tab_a"]):
            self.panel.set_empty()
            return
        self.tab_a = req["tab_a"]
        self.tab_b = req["tab_b"] if _alive(req["tab_b"]) else None
        self.path_b = req["path_b"]
        self.name_b = req["name_b"]
        self.outcome = outcome
        self.map_a = req["map_a"]
        self.map_b = req["map_b"]
        self.diff = translate(outcome, self.map_a, self.map_b)
        self.stale = False
        self._doc_a = self.tab_a.doc
        self._listen(self._doc_a, True)
        self._watch(self.tab_a)
        self.panel.set_diff(self.diff, req["name_a"], self.name_b, outcome.seconds)
        self.panel.set_stale(False)
        self._attach(self.tab_a, self.diff.status_a)
        if self.tab_b is not None:
            self._watch(self.tab_b)
            self._doc_b = self.tab_b.doc
            self._listen(self._doc_b, True)
            self._attach(self.tab_b, self.diff.status_b)
        self.panel.set_other_open(self.tab_b is not None)
        # A against its own file on disk ("what did I change?"): B cannot get a tab of its own
        same_file = (self.tab_b is None and self.path_b is not None and self.tab_a.path is not None
                     and self.path_b.resolve() == self.tab_a.path.resolve())
        self.panel.open_button.setEnabled(not same_file)
        c = self.diff.counts()
        self.window_.statusBar().showMessage(
            f"Diff: {c['nodes_changed']} changed, {c['nodes_added']} added, {c['nodes_removed']} removed nodes", 6000)

    def _on_failed(self, ticket: int, error) -> None:
        if ticket != self._ticket:
            return
        self._request = None
        self.panel.set_busy(False)
        self.panel.set_empty()
        self._fail(error.message if isinstance(error, StudioError) else str(error))

    def _fail(self, message: str) -> None:
        line = message.splitlines()[0] if message else "comparison failed"
        self.show()
        self.panel.show_message(escape(f"Cannot compare: {line}"))
        self.window_.statusBar().showMessage(f"Cannot compare: {line}", 8000)

    def _watch(self, tab) -> None:
        """Hear once when ``tab`` goes (however many comparisons it takes part in)."""
        if id(tab) not in self._watched:
            self._watched.add(id(tab))
            tab.destroyed.connect(lambda *_a, k=id(tab): self._tab_gone(k))

    def _tab_gone(self, key: int) -> None:
        self._watched.discard(key)
        self._on_tab_destroyed()

    def _listen(self, doc, on: bool) -> None:
        """Follow (or stop following) edits of one side's open document."""
        if doc is None:
            return
        if on:
            doc.changed.connect(self._on_side_changed)
        else:
            doc.changed.disconnect(self._on_side_changed, missing_ok=True)

    def _on_side_changed(self, _changes=None) -> None:
        """A (or B's open document) was edited: the list may no longer match."""
        if not self.stale:
            self.stale = True
            self.panel.set_stale(True)

    # -- overlays ---------------------------------------------------------------------------
    def _attach(self, tab, status: dict[int, str]) -> CanvasDiff:
        key = id(tab)
        overlay = self.overlays.get(key)
        if overlay is None:
            overlay = self.overlays[key] = CanvasDiff(tab)
            overlay.on_cleared = lambda: untick(self.panel.overlay_check)
        overlay.set_status(status)
        overlay.set_visible(self.panel.overlay_check.isChecked())
        return overlay

    def overlay_for(self, tab) -> CanvasDiff | None:
        return self.overlays.get(id(tab)) if tab is not None else None

    def set_overlay_visible(self, on: bool) -> None:
        if self.panel.overlay_check.isChecked() != on:
            self.panel.overlay_check.setChecked(on)  # comes back here through the signal
            return
        for overlay in self.overlays.values():
            if _alive(overlay.tab):
                overlay.set_visible(on)

    # -- the other model's tab -----------------------------------------------------------------
    def open_other(self) -> None:
        """Show B in the tab next to A (opening the file when it is not open)."""
        if self.diff is None:
            return
        if _alive(self.tab_b):
            self.window_.tabs.setCurrentWidget(self.tab_b)
            return
        if self.path_b is not None:
            self.window_.open_path(self.path_b)

    def _on_model_shown(self, tab) -> None:
        if self.diff is None or _alive(self.tab_b) or self.path_b is None or tab is self.tab_a:
            return
        if tab.path is None or tab.path.resolve() != self.path_b.resolve():
            return
        self.tab_b = tab
        self.map_b = SideMap.of(tab.doc)
        self.diff = translate(self.outcome, self.map_a, self.map_b)
        self._watch(tab)
        self._doc_b = tab.doc
        self._listen(self._doc_b, True)
        self._attach(tab, self.diff.status_b)
        self.panel.set_diff(self.diff, self.tab_a.title().rstrip("*"), self.name_b, self.outcome.seconds)
        self.panel.set_stale(self.stale)
        self.panel.set_other_open(True)
        tabs = self.window_.tabs
        ia, ib = tabs.indexOf(self.tab_a), tabs.indexOf(tab)
        if ia >= 0 and ib >= 0 and ib != ia + 1:
            tabs.tabBar().moveTab(ib, ia + 1 if ib > ia else ia)

    def _on_tab_destroyed(self, *_args) -> None:
        if not shiboken6.isValid(self):  # the window closed: tabs go after the dock
            return
        # NOTE: destroyed arrives after the Python side is gone; find which tab went by validity
        if self.tab_a is not None and not _alive(self.tab_a):
            self.tab_a = None
            self.clear(keep_dock=True)
            self.panel.set_empty()
            return
        if self.tab_b is not None and not _alive(self.tab_b):
            self._listen(self._doc_b, False)
            self._doc_b = None
            self.overlays = {k: o for k, o in self.overlays.items() if _alive(o.tab)}
            self.tab_b = None
            self.map_b = None
            self.panel.set_other_open(False)

    # -- revealing a change -----------------------------------------------------------------
    def reveal(self, ref: ChangeRef) -> None:
        """Select the node(s) of ``ref`` on A's canvas and on B's (when open), centred."""
        tabs = self.window_.tabs
        a = ref.a if ref.a is not None and ref.a >= 0 else None
        b = ref.b if ref.b is not None and ref.b >= 0 else None
        if a is None and b is None:
            return
        tab_a = self.tab_a if _alive(self.tab_a) else None
        tab_b = self.tab_b if _alive(self.tab_b) else None
        if a is not None and b is None and tab_b is not None:
            b = self.diff.pairs.get(a)
        if tab_a is not None and a is not None and tab_a.doc.has_node(a):
            tab_a.selection.select([Target.of_node(tab_a.doc.index.node_scope[a], a)], SOURCE)
        if tab_b is not None and b is not None and tab_b.doc.has_node(b):
            tab_b.selection.select([Target.of_node(tab_b.doc.index.node_scope[b], b)], SOURCE)
        current = tabs.currentWidget()
        if a is None:
            if tab_b is None:
                self.window_.statusBar().showMessage(
                    "This node is only in the other model: open it side by side to see it", 6000)
            elif current is not tab_b:
                tabs.setCurrentWidget(tab_b)
        elif tab_a is not None and current is not tab_a and not (current is tab_b and b is not None):
            tabs.setCurrentWidget(tab_a)

    # -- extraction ----------------------------------------------------------------------------
    def extract(self):
        """Extract the current tab's selected nodes into a new untitled tab; the new
        Document, or None (the reason is shown in the status bar)."""
        tab = self.window_.current_tab()
        if tab is None:
            return None
        bar = self.window_.statusBar()
        # NOTE: synchronous: extraction of a selection takes milliseconds (0.03 s for 3 nodes,
        # 0.01 s for 336 nodes of ppocrv4_det); only the shape inference of a huge cut is slow
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            model = extract_selection(tab)
        except StudioError as exc:
            bar.showMessage(f"Cannot extract: {exc.message.splitlines()[0] if exc.message else exc}", 8000)
            return None
        finally:
            QApplication.restoreOverrideCursor()
        doc = open_new_document(self.window_, model)
        n = len(model.graph.node)
        bar.showMessage(f"Extracted {n} node{'s' if n != 1 else ''} from {tab.title().rstrip('*')}", 5000)
        return doc

    # -- clearing ------------------------------------------------------------------------------
    def clear(self, *, keep_dock: bool = False) -> None:
        """Forget the comparison: colours off every canvas, the list emptied."""
        self._ticket = 0 if not keep_dock else self._ticket
        self._request = None if not keep_dock else self._request
        self._listen(self._doc_a, False)
        self._listen(self._doc_b, False)
        self._doc_a = self._doc_b = None
        for overlay in self.overlays.values():
            if _alive(overlay.tab) and shiboken6.isValid(overlay.scene):
                overlay.detach()
        self.overlays.clear()
        self.tab_a = self.tab_b = None
        self.outcome = self.diff = self.map_a = self.map_b = None
        self.path_b = None
        self.stale = False
        self.panel.set_busy(False)
        self.panel.set_empty()

    def closeEvent(self, event) -> None:  # noqa: N802
        self._ticket = 0
        self._request = None
        self.clear()
        super().closeEvent(event)
