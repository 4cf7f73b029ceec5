"""The main window. It only wires: docks, menus, actions and signals.

Behaviour lives elsewhere: loading in :mod:`widgets.window.loader`, one open model in
:mod:`widgets.window.document_tab`, each panel in :mod:`widgets.panels` (placed by
:mod:`widgets.window.layout`), every action in :mod:`widgets.actions` (the registry and
the window's own File/Edit/View/Tools entries), settings in :mod:`widgets.settings.store`,
appearance in :mod:`widgets.settings.theme`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QStackedWidget, QTabWidget
from shiboken6 import isValid

from editor.errors import ExternalDataError, StudioError
from widgets.window import layout as window_layout
from widgets.actions import canvas as canvas_actions
from widgets.actions import edit as edit_actions
from widgets.actions import file as file_actions
from widgets.actions import tools as tools_actions
from widgets.actions import view as view_actions
from widgets.actions.registry import ActionRegistry
from widgets.window.document_tab import DocumentTab
from widgets.window.heap_freeze import freeze_when_settled
from widgets.docking import install_docking
from widgets.editing import install_editing
from widgets.common.formatting import shown
from widgets.common.next_pass import pass_timer
from widgets.editing.save import holds_work
from widgets.window.file_watch import install_file_watch
from widgets.window.view_extras import install_view_extras
from widgets.window.loader import LoadRequest, ModelLoader, show_error
from widgets.panels.start_page import StartPage
from widgets.overlays.node_data import install_node_data
from widgets.view.shape_labels import install_shape_labels
from widgets.editing.shapes_refresh import install_refresh_shapes
from widgets.settings.store import Settings

#: closing a tab of a model this big returns freed memory to the system (malloc_trim)
BIG_MODEL_BYTES = 32 * 1024 * 1024

#: what :meth:`MainWindow.install_late_docks` sets: asking for one of them installs them
LATE_ATTRIBUTES = frozenset({"find_panel", "cost", "run_dock", "compare_dock", "diff_owner", "numeric_dock",
                             "generate_dock", "quantize_dock"})


class MainWindow(QMainWindow):
    """Tabs of open models, docked panels, menus; see module docstring."""

    #: a tab's model is loaded and its first layout is on screen
    modelShown = Signal(object)
    #: a load failed; the message is the one-line error (also shown in a dialog)
    loadFailed = Signal(str)
    #: a tab's layout failed (the model is open, the canvas could not be drawn)
    layoutFailed = Signal(str)
    #: (``defer_docks``) the start-up is over: the first model is painted, or nothing is
    #: being opened, or the opening failed; the late docks are installed now
    startupDone = Signal()

    def __init__(self, *, settings: Settings | None = None, theme=None, sample: Path | None = None,
                 recovery_store=None, defer_docks: bool = False) -> None:
        """``defer_docks``: the docks no first picture needs (Run, Diff, Compare Runs,
        Generate, Quantization), the Find and Cost panels and their modules come after the
        first model is painted (:meth:`install_late_docks`), as the application starts; else
        at once."""
        super().__init__()
        self._late_docks = "waiting"  # -> "installing" -> "installed"
        self._docking_installed = False
        #: the saved dock layout restored at start, kept until the late docks take their place in it
        self._restored_state = None
        #: calls waiting for the late docks (:meth:`when_started_up`)
        self._after_start_up: list = []
        # (steps at later passes of the event loop: timers, see widgets.common.next_pass)
        self._late_step_timer = pass_timer(self, self._install_late_docks_in_steps)
        self._after_start_up_timer = pass_timer(self, self._run_after_start_up)
        self.settings = settings or Settings()
        self.theme = theme
        #: False in --screenshot mode: failures go to loadFailed only, no modal dialog
        self.interactive_errors = True
        self.setWindowTitle("ONNX Studio")
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.loader = ModelLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_load_failed)
        self.loader.busyChanged.connect(self._on_load_busy)
        #: every action of the window (widgets/actions): features register theirs here
        self.registry = ActionRegistry(self)
        for action_id, keys in self.settings.shortcuts().items():  # the user's own keys
            self.registry.set_shortcut(action_id, keys)
        self._build_central(sample)
        window_layout.build_docks(self)
        window_layout.build_status(self)
        file_actions.register(self)
        edit_actions.register(self)
        view_actions.register(self)
        tools_actions.register(self)
        canvas_actions.register(self)
        # editing: menus, History / Python Console docks, canvas gestures (widgets/editing)
        self.editing = install_editing(self, recovery_store=recovery_store)
        install_node_data(self)
        install_refresh_shapes(self)  # Graph ▸ Refresh Shapes… (registry action graph.refresh_shapes)
        install_shape_labels(self)  # View ▸ Shapes of the Last Run (registry action view.shapes_of_last_run)
        install_file_watch(self)  # sets self.file_watch: files changed on disk
        install_view_extras(self)  # Export Image, Minimap toggle, copy names (issue 15)
        if not defer_docks:
            self.install_late_docks()  # before restoreState: their places are saved too
        install_docking(self)  # last of the docks: frames that shrink, bottom docks tabbed together
        self._docking_installed = True
        self.registry.order_menubar(self.MENU_ORDER)
        geometry, state = self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        if state is not None:
            if self.restoreState(state):
                self._restored_state = state
            from widgets.docking import hide_stray_tab_bars

            hide_stray_tab_bars(self)  # Qt's duplicate of the first tab bar, with hidden docks' names
        else:
            from widgets.docking import hide_idle_docks

            hide_idle_docks(self)  # now: not drawn in the first frames
            QTimer.singleShot(0, lambda: window_layout.default_dock_sizes(self))
        if theme is not None:
            theme.themeChanged.connect(self._on_theme)
        file_actions.refresh_recent(self)
        self._on_current_tab(-1)
        if self._late_docks == "waiting":
            # no model on the way once the event loop runs (the start page): install them
            # then; an opening installs them once its picture is on screen (_on_tab_ready)
            self._install_late_docks_unless_opening()

    # -- docks installed after the first picture -------------------------------------------
    def __getattr__(self, name: str):
        # NOTE: only for attributes not set yet: code that asks for a late dock before it
        # is installed (a test, --run, a menu action) gets it built then
        if name in LATE_ATTRIBUTES and self.__dict__.get("_late_docks") in ("waiting", "installing"):
            self.install_late_docks()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def started_up(self) -> bool:
        """The late docks are installed (:attr:`startupDone` was emitted, or the window was
        built without ``defer_docks``)."""
        return self._late_docks == "installed"

    def late_dock(self, name: str):
        """The late dock (or ``diff_owner``) ``name`` once installed, else None; unlike the
        attribute, asking does not install it (an action's enablement asks on every refresh)."""
        return self.__dict__.get(name)

    def _install_late_docks_unless_opening(self) -> None:
        """At the next event-loop pass, :meth:`install_late_docks` unless a model is being
        opened by then (its picture installs them)."""
        pass_timer(self, lambda: None if self._opening() else self._install_late_docks_in_steps()).start()

    def install_late_docks(self) -> None:
        """The Run, Diff, Compare Runs, Generate and Quantization docks with their menus
        (Run, Tools ▸ Compare…, Surgery ▸ Quantize…), the Find and Cost panels (in their docks,
        placed at start) and the file-dialog filter, all that is not installed yet, now.
        The docks are hidden until used, and their modules (onnxruntime's front end, the
        debugger, the decoder, the quantizer) cost a third of a second of start-up CPU, so
        the application installs them after the first picture
        (:meth:`_install_late_docks_in_steps`); once installed the window is the same as
        one that built them at once (a test compares the two)."""
        while self._next_late_step():
            pass
        while self._after_start_up:  # asked for now: what waited for them runs now too
            self._after_start_up.pop(0)()

    def _install_late_docks_in_steps(self) -> None:
        """:meth:`install_late_docks`, one dock per pass of the event loop: the window
        answers a click or a scroll between two (all at once froze it for a second and a
        half after the first picture of the 11.8k-node export)."""
        if self._next_late_step():
            self._late_step_timer.start()

    def _next_late_step(self) -> bool:
        """Install the next late dock; False once none is left."""
        if self._late_docks == "waiting":
            self._late_docks = "installing"
            self._late_steps = self._late_dock_steps()
        if self._late_docks != "installing" or not self._late_steps:
            return False
        self._late_steps.pop(0)()
        if self._late_docks != "installing":
            return False
        if self._docking_installed:
            self.registry.order_menubar(self.MENU_ORDER)  # a new menu (Run) takes its place at once
        return True

    def _late_dock_steps(self) -> list:
        def panels() -> None:
            window_layout.install_late_panels(self)  # sets self.find_panel and self.cost, in docks placed at start

        def run() -> None:
            from widgets.run import install_run_dock

            run_dock = install_run_dock(self)  # tabbed with Problems
            run_dock.profiled.connect(self.cost.set_profile)

        def compare() -> None:
            from widgets.compare import install_compare
            from widgets.compare.diff_owner import install_diff_owner

            install_compare(self)  # sets self.compare_dock, tabbed with the Run dock
            install_diff_owner(self)  # the Diff dock's caption naming the document it compares

        def diff_view() -> None:
            from widgets.diffview import install_diff_view

            install_diff_view(self)  # Compare Side by Side, What Did I Change?, F8 / Shift+F8

        def numeric() -> None:
            from widgets.numeric import install_numeric_dock

            install_numeric_dock(self)  # sets self.numeric_dock (Compare Runs), tabbed with the Diff dock

        def generate() -> None:
            from widgets.generate import install_generate_dock

            install_generate_dock(self)  # sets self.generate_dock (Generate Text), tabbed with Compare Runs

        def quantize() -> None:
            from widgets.quantize import install_quantize

            install_quantize(self)  # sets self.quantize_dock; Surgery ▸ Quantize… (registry action surgery.quantize)

        def file_dialogs() -> None:
            from widgets.window.file_dialog_fit import install_file_dialog_fit

            # NOTE: after the first picture: an application-wide event filter brings every
            # event's object into Python, and the first of a class private to Qt makes
            # PySide6 build all of its types it had left for later (168 enum types, ~50 ms
            # of GUI-thread CPU that the first picture of the 11.8k-node export waited for)
            install_file_dialog_fit()

        return [panels, run, compare, diff_view, numeric, generate, quantize, file_dialogs, self._late_docks_placed]

    def _late_docks_placed(self) -> None:
        self._late_docks = "installed"
        if not self._docking_installed:
            return  # the constructor goes on: install_docking and restoreState see them
        from widgets.docking import install_late_docks

        install_late_docks(self, [self.run_dock, self.compare_dock, self.numeric_dock, self.generate_dock,
                                  self.quantize_dock], self._restored_state)
        self._restored_state = None
        self.registry.order_menubar(self.MENU_ORDER)
        self.startupDone.emit()
        if self._after_start_up:
            self._after_start_up_timer.start()

    def _run_after_start_up(self) -> None:
        """The calls that waited for the late docks, one per pass of the event loop: the
        shape engine's snapshot, the collector's return and the panels following the model
        held the export's window 0.2 s in one piece."""
        if self._after_start_up:
            self._after_start_up.pop(0)()
        if self._after_start_up:
            self._after_start_up_timer.start()

    # -- construction ---------------------------------------------------------------------
    def _build_central(self, sample: Path | None) -> None:
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_current_tab)
        self.start_page = StartPage(self, sample=sample)
        self.start_page.openRequested.connect(self.open_path)
        self.start_page.browseRequested.connect(self.open_dialog)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(self.tabs)
        self.setCentralWidget(self.stack)

    MENU_ORDER = ("File", "Edit", "View", "Node", "Graph", "Model", "Tools", "Run", "Surgery", "Help")

    # -- tabs -------------------------------------------------------------------------------
    def current_tab(self) -> DocumentTab | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, DocumentTab) else None

    def tab_list(self) -> list[DocumentTab]:
        """The open models' tabs (not the other tabs: a diff view holds two models of its own)."""
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, DocumentTab)]

    def _other_tabs(self) -> list:
        """Tabs that are not one model (widgets.diffview's DiffView)."""
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if not isinstance(w, DocumentTab)]

    def _on_current_tab(self, _index: int) -> None:
        tab = self.current_tab()
        # NOTE: the panels over a model not drawn yet fill in once its first picture is on
        # screen (or its layout failed): the outline alone of the 11.8k-node export held
        # its first paint back by a fifth of the time
        self._set_panels_tab(tab if tab is None or tab.is_ready else None)
        self.stack.setCurrentWidget(self.tabs if self.tabs.count() else self.start_page)
        self.registry.refresh()
        self._update_history()
        window_layout.update_status(self)

    def _set_panels_tab(self, tab: DocumentTab | None) -> None:
        for panel in self.panels:
            panel.set_tab(tab)

    def _panels_follow(self, tab: DocumentTab) -> None:
        """``tab`` is drawn (or cannot be): the panels show it when it is the current tab."""
        if tab is self.current_tab():
            self._set_panels_tab(tab)

    def close_tab(self, index: int) -> None:
        tab = self.tabs.widget(index)
        if tab is None:
            return
        if not isinstance(tab, DocumentTab):  # a diff view: nothing of its own to save
            self.tabs.removeTab(index)
            tab.close_view()
            tab.deleteLater()
            if self.tabs.count() == 0:
                self._on_current_tab(-1)
            return
        if tab.doc.is_modified and not self._confirm_discard(tab):
            return
        self.tabs.removeTab(index)
        tab.close_document()
        tab.deleteLater()
        from editor.runtime.memory import thaw_heap

        thaw_heap()  # its cycles may go now (the others are frozen again when a model shows)
        if getattr(tab.doc, "file_size", 0) >= BIG_MODEL_BYTES:
            # once the tab is gone, give the freed heap back to the system (glibc; ~ms)
            from editor.runtime.memory import trim

            QTimer.singleShot(500, trim)
        if self.tabs.count() == 0:
            self._on_current_tab(-1)

    def _confirm_discard(self, tab: DocumentTab) -> bool:
        """Save / Discard / Cancel for a modified tab; True when it may close."""
        return self.editing.confirm_close([tab])

    def add_document(self, doc, validator=None) -> DocumentTab:
        """Show an already open Document (a new, extracted, reduced or recovered model) in a
        tab of its own.

        NOTE: a model with content and no file is unsaved work from its first moment: an
        extracted selection or a reduced failing subgraph once vanished on Quit without a
        word, because a fresh document counts as clean. It starts modified, so every close
        asks and crash recovery keeps a copy; an empty new model has nothing to lose."""
        if doc.path is None and holds_work(doc):
            doc.stack.clean_index = None
        request = LoadRequest(0, doc.path or Path("Untitled.onnx"), validator=validator)
        self._on_loaded(request, doc)
        return self.tab_list()[-1]

    # -- opening ---------------------------------------------------------------------------
    def open_dialog(self) -> None:
        file_actions.open_dialog(self)

    def open_path(self, path: str | Path, *, data_dir: str | Path | None = None) -> LoadRequest | None:
        """Open ``path`` in a new tab (or switch to it if it is open); loads in the background."""
        resolved = Path(path).resolve()
        for i, tab in enumerate(self.tab_list()):
            if tab.path is not None and tab.path.resolve() == resolved:
                self.tabs.setCurrentIndex(i)
                self.modelShown.emit(tab)
                return None
        self.statusBar().showMessage(f"Opening {Path(path).name}…")
        return self.loader.load(path, data_dir=data_dir)

    def cancel_loading(self) -> None:
        """Cancel every open in progress: parses in flight, and tabs whose first layout is
        not done yet (they close: an open is all or nothing)."""
        self.loader.cancel()
        for tab in self.tab_list():
            if not tab.is_ready:
                tab.doc.stack.set_clean()
                self.close_tab(self.tabs.indexOf(tab))
        self._update_busy()
        self.statusBar().showMessage("Opening cancelled", 4000)

    def _opening(self) -> bool:
        return self.loader.is_busy() or any(not t.is_ready for t in self.tab_list())

    def _on_load_busy(self, _busy: bool) -> None:
        self._update_busy()

    def _update_busy(self) -> None:
        busy = self._opening()
        if not busy and self._late_docks == "waiting" and self._docking_installed:
            # an opening ended without a picture (failed, cancelled): the start-up is over
            self._install_late_docks_unless_opening()
        if self.loader.is_busy():
            self.progress.setRange(0, 0)  # parsing reports no progress: busy indicator
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def _on_tab_progress(self, tab: DocumentTab, fraction: float) -> None:
        if not tab.is_ready and not self.loader.is_busy():
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))

    def _on_loaded(self, request: LoadRequest, doc) -> None:
        tab = DocumentTab(doc, self.tabs, dark=bool(self.theme and self.theme.dark),
                          show_names=self.registry.action("view.names").isChecked(), validator=request.validator,
                          options=self.display_options(), groups=request.groups)
        tab.ready.connect(lambda t=tab: self._on_tab_ready(t))
        tab.busyChanged.connect(self._on_tab_busy)
        tab.progress.connect(lambda f, t=tab: self._on_tab_progress(t, f))
        tab.layoutFailed.connect(lambda msg: self.statusBar().showMessage(f"layout failed: {msg}", 8000))
        tab.layoutFailed.connect(lambda _msg, t=tab: self._panels_follow(t) if not t.is_ready else None)
        tab.layoutFailed.connect(self.layoutFailed)
        tab.layoutFailed.connect(lambda _msg: self.install_late_docks())  # no picture is coming
        tab.canvas.view.zoomChanged.connect(lambda z: window_layout.update_zoom(self, z))
        # the group actions that act on the selection follow it (Ctrl+] stayed greyed out
        # after a click on a group until something else refreshed the registry)
        tab.canvas.selectionChangedKeys.connect(lambda _keys: self.registry.refresh("view.expand_selection"))
        doc.history_changed.connect(self._update_history)
        # the node count follows every edit (a delete-and-reconnect, an fp16 conversion)
        doc.changed.connect(lambda _c, t=tab: window_layout.update_status(self) if t is self.current_tab() else None)
        doc.clean_changed.connect(lambda _clean, t=tab: self._update_title(t))
        doc.path_changed.connect(lambda _p, t=tab: self._update_title(t))
        index = self.tabs.addTab(tab, tab.title())
        self.tabs.setTabToolTip(index, shown(str(doc.path or "")))
        self.tabs.setCurrentIndex(index)
        self._update_busy()
        if doc.path is not None:
            self.settings.add_recent(doc.path)
            self.settings.set_last_dir(str(doc.path.parent))
            file_actions.refresh_recent(self)
        self.statusBar().showMessage(f"Opened {shown(request.path.name)}", 3000)

    def _on_tab_ready(self, tab: DocumentTab) -> None:
        if tab is self.current_tab() and self.isVisible():
            # the first picture goes on screen now, before the panels fill in (the outline
            # of 11.8k nodes takes a while); the view was fitted when the layout arrived
            tab.canvas.view.viewport().repaint()
        self._update_busy()
        if tab is self.current_tab():
            window_layout.update_status(self)
        # NOTE: the late docks first, one per pass of the event loop, then the panels: the
        # Cost panel starts its job on a thread, and the ~100 module imports of the late
        # docks, made while a thread computes, waited for the GIL at each file-system call
        # (up to a switch interval each). The window froze 2.7-3.1 s after the export's
        # first picture with the panels first and the docks at once.
        self._install_late_docks_in_steps()  # (after the picture: see __init__)
        self.when_started_up(lambda: self._model_shown(tab))

    def when_started_up(self, call) -> None:
        """``call()`` once the late docks are installed (now, if they are and nothing
        waits before it); the calls that waited run in order, one per event-loop pass."""
        if self.started_up and not self._after_start_up:
            call()
            return
        self._after_start_up.append(call)

    def _model_shown(self, tab: DocumentTab) -> None:
        from editor.runtime.memory import freeze_heap

        if not isValid(tab) or self.tabs.indexOf(tab) < 0:
            return  # closed meanwhile
        self._panels_follow(tab)
        freeze_heap()  # the model's objects stay out of the collector's full passes
        freeze_when_settled(self, tab)  # and what its opening makes after the picture
        self.modelShown.emit(tab)

    def _on_tab_busy(self, busy: bool) -> None:
        if busy:
            self.statusBar().showMessage("Laying out…")
        else:
            self.statusBar().clearMessage()

    def _on_load_failed(self, request: LoadRequest, error: StudioError) -> None:
        self.statusBar().clearMessage()
        if isinstance(error, ExternalDataError) and request.data_dir is None and self.interactive_errors:
            folder = QFileDialog.getExistingDirectory(
                self, f"Folder with the external data of {request.path.name}", str(request.path.parent))
            if folder:
                self.loader.load(request.path, data_dir=folder)
                return
        self.loadFailed.emit(error.message)
        if self.interactive_errors:
            show_error(self, "Cannot open model", error)

    # -- drag and drop ------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
        event.acceptProposedAction()

    # -- edit ------------------------------------------------------------------------------------
    def _update_history(self) -> None:
        tab = self.current_tab()
        edit_actions.update_history(self)
        if tab is not None:
            self._update_title(tab)
        else:
            self.setWindowTitle("ONNX Studio")
            self.setWindowModified(False)

    def _update_title(self, tab: DocumentTab) -> None:
        index = self.tabs.indexOf(tab)
        # NOTE: only when it differs: QTabBar relayouts on every setTabText, which repaints
        # the whole tab area (canvas included) after each edit
        if index >= 0 and self.tabs.tabText(index) != tab.title():
            self.tabs.setTabText(index, tab.title())
        if tab is self.current_tab():
            name = shown(tab.doc.path.name) if tab.doc.path else "Untitled"
            self.setWindowTitle(f"{name}[*] — ONNX Studio")
            self.setWindowModified(tab.doc.is_modified)

    def save(self) -> bool:
        return file_actions.save(self)

    def save_as(self) -> bool:
        return file_actions.save_as(self)

    # -- view ---------------------------------------------------------------------------------
    def show_find(self) -> None:
        self.find_dock.show()
        self.find_dock.raise_()
        self.find_panel.focus_query()

    def show_main_graph(self) -> None:
        tab = self.current_tab()
        if tab is not None:
            tab.show_scope(tab.doc.index.main)

    def set_show_names(self, on: bool) -> None:
        self.settings.set_view_option("show_names", on)
        for tab in self.tab_list() + self._other_tabs():
            tab.set_show_names(on)

    def display_options(self):
        from widgets.view.display_options import DisplayOptions

        checked = lambda action_id: self.registry.action(action_id).isChecked()  # noqa: E731
        return DisplayOptions(attributes=checked("view.attributes"), shapes=checked("view.shapes"),
                              initializers=checked("view.initializers"))

    def set_display_options(self, _on: bool = False) -> None:
        options = self.display_options()
        self.settings.set_view_option("show_attributes", options.attributes)
        self.settings.set_view_option("show_shapes", options.shapes)
        self.settings.set_view_option("show_initializers", options.initializers)
        for tab in self.tab_list():
            tab.set_options(options)

    def set_theme(self, choice: str) -> None:
        if self.theme is None:
            return
        self.settings.set_theme(choice)
        self.theme.set_choice(choice)

    def _on_theme(self, dark: bool) -> None:
        for tab in self.tab_list() + self._other_tabs():
            tab.set_dark(dark)

    def show_weights(self, target) -> None:
        tab = self.current_tab()
        self.weights.show_tensor(tab.doc if tab is not None else None, target)

    # -- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        # unsaved work was asked about before this runs: the editing controller filters the
        # window's Close event (one question for every unsaved tab, Untitled ones included)
        self.settings.save_window_state(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.loader.cancel()
        self.problems.shutdown()
        for tab in self.tab_list():
            tab.close_document()
        for view in self._other_tabs():
            view.close_view()
        from editor.runtime.memory import thaw_heap

        thaw_heap()
        super().closeEvent(event)
