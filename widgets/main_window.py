"""The main window. It only wires: docks, menus, actions and signals.

Behaviour lives elsewhere: loading in :mod:`widgets.loader`, one open model in
:mod:`widgets.document_tab`, each panel in :mod:`widgets.panels`, settings in
:mod:`widgets.settings`, appearance in :mod:`widgets.theme`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QWidget,
)

from editor.errors import ExternalDataError, StudioError
from widgets.actions.registry import ActionRegistry
from widgets.document_tab import DocumentTab
from widgets.compare import install_compare
from widgets.editing import install_editing
from widgets.editing.save import confirm_invalid_save
from widgets.formatting import human_bytes, shown
from widgets.file_watch import install_file_watch
from widgets.loader import LoadRequest, ModelLoader, show_error
from widgets.panels.find import FindPanel
from widgets.panels.op_docs import OpDocsPanel
from widgets.panels.outline import OutlinePanel
from widgets.panels.properties import PropertiesPanel
from widgets.panels.start_page import StartPage
from widgets.node_data import install_node_data
from widgets.shape_labels import install_shape_labels
from widgets.shapes_refresh import install_refresh_shapes
from widgets.numeric import install_numeric_dock
from widgets.run import install_run_dock
from widgets.settings import Settings

#: closing a tab of a model this big returns freed memory to the system (malloc_trim)
BIG_MODEL_BYTES = 32 * 1024 * 1024
MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.txt);;All files (*)"


def _available(module: str) -> bool:
    """Whether an optional core module has landed (panels that need it are wired then)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class MainWindow(QMainWindow):
    """Tabs of open models, docked panels, menus; see module docstring."""

    #: a tab's model is loaded and its first layout is on screen
    modelShown = Signal(object)
    #: a load failed; the message is the one-line error (also shown in a dialog)
    loadFailed = Signal(str)
    #: a tab's layout failed (the model is open, the canvas could not be drawn)
    layoutFailed = Signal(str)

    def __init__(self, *, settings: Settings | None = None, theme=None, sample: Path | None = None,
                 recovery_store=None) -> None:
        super().__init__()
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
        self._build_central(sample)
        self._build_docks()
        self._build_status()
        self._build_actions()
        self._build_menus()
        self.run_dock = install_run_dock(self)  # before restoreState: its place is saved too
        self.run_dock.profiled.connect(self.cost.set_profile)
        # editing: menus, History / Python Console docks, canvas gestures (widgets/editing)
        self.editing = install_editing(self, recovery_store=recovery_store)
        install_compare(self)  # sets self.compare_dock; before restoreState like the others
        install_node_data(self)
        install_refresh_shapes(self)  # Graph ▸ Refresh Shapes… (registry action graph.refresh_shapes)
        install_shape_labels(self)  # View ▸ Shapes of the Last Run (registry action view.shapes_of_last_run)
        install_numeric_dock(self)  # sets self.numeric_dock (Compare Runs), tabbed with the Diff dock
        install_file_watch(self)  # sets self.file_watch: files changed on disk
        self._order_menus()
        geometry, state = self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        if state is not None:
            self.restoreState(state)
        else:
            QTimer.singleShot(0, self._default_dock_sizes)
        if theme is not None:
            theme.themeChanged.connect(self._on_theme)
        self._refresh_recent()
        self._on_current_tab(-1)

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

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState/restoreState key
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        # IDE layout: side docks run the full height, the problems dock sits under the canvas
        self.setCorner(Qt.Corner.BottomLeftCorner, left)
        self.setCorner(Qt.Corner.BottomRightCorner, right)
        self.outline = OutlinePanel(self)
        self.find_panel = FindPanel(self)
        self.properties = PropertiesPanel(self)
        self.op_docs = OpDocsPanel(self)
        self.outline_dock = self._dock("Outline", "outline", self.outline, left)
        self.find_dock = self._dock("Find", "find", self.find_panel, left)
        self.tabifyDockWidget(self.outline_dock, self.find_dock)
        self.outline_dock.raise_()
        self.properties_dock = self._dock("Properties", "properties", self.properties, right)
        self.op_docs_dock = self._dock("Operator", "op_docs", self.op_docs, right)
        self.splitDockWidget(self.properties_dock, self.op_docs_dock, Qt.Orientation.Vertical)
        self.panels: list = [self.outline, self.find_panel, self.properties, self.op_docs]
        self.docks = [self.outline_dock, self.find_dock, self.properties_dock, self.op_docs_dock]
        # Panels over core modules that other branches deliver: wired once the code is there.
        self.problems = self.summary = self.weights = None
        if _available("editor.validation"):
            from widgets.panels.problems import ProblemsPanel

            self.problems = ProblemsPanel(self)
            self.problems_dock = self._dock("Problems", "problems", self.problems, bottom)
            self.problems.countChanged.connect(
                lambda errors, total: self.problems_dock.setWindowTitle(f"Problems ({total})" if total else "Problems"))
            self.panels.append(self.problems)
            self.docks.append(self.problems_dock)
        if _available("editor.summary"):
            from widgets.panels.summary import SummaryPanel

            self.summary = SummaryPanel(self)
            self.summary_dock = self._dock("Summary", "summary", self.summary, right)
            self.tabifyDockWidget(self.properties_dock, self.summary_dock)
            self.properties_dock.raise_()
            self.panels.append(self.summary)
            self.docks.append(self.summary_dock)
        from widgets.panels.cost import CostPanel

        self.cost = CostPanel(self)
        self.cost_dock = self._dock("Cost", "cost", self.cost, right)
        self.tabifyDockWidget(self.properties_dock, self.cost_dock)
        self.properties_dock.raise_()
        self.panels.append(self.cost)
        self.docks.append(self.cost_dock)
        if _available("editor.weights"):
            from widgets.panels.weights import WeightsView

            self.weights = WeightsView(self)
            self.properties.set_weights_view(self.weights)
            self.properties.tensorShown.connect(self._show_weights)

    MENU_ORDER = ("File", "Edit", "View", "Node", "Graph", "Model", "Tools", "Run", "Help")

    def _order_menus(self) -> None:
        """Menus added by the installed features go where desktop users look for them."""
        bar = self.menuBar()
        actions = list(bar.actions())

        def rank(action) -> int:
            title = action.text().replace("&", "")
            return self.MENU_ORDER.index(title) if title in self.MENU_ORDER else len(self.MENU_ORDER) - 1

        for action in actions:
            bar.removeAction(action)
        for action in sorted(actions, key=rank):  # stable: unknown menus keep their order before Help
            bar.addAction(action)

    def _default_dock_sizes(self) -> None:
        """First-run proportions: roomy side panels, a modest bottom area, Problems in front.

        NOTE: resizeDocks only takes effect once the window has its real size, so this runs
        from the event loop after the first show (a saved window state replaces it)."""
        self.resizeDocks([self.outline_dock], [300], Qt.Orientation.Horizontal)
        self.resizeDocks([self.properties_dock], [380], Qt.Orientation.Horizontal)
        bottom = [d for d in (getattr(self, "problems_dock", None), getattr(self, "run_dock", None)) if d is not None]
        if bottom:
            self.resizeDocks(bottom[:1], [230], Qt.Orientation.Vertical)
            bottom[0].raise_()

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.model_info = QLabel(self)
        self.zoom_info = QLabel(self)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setFlat(True)
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel_loading)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        bar.addPermanentWidget(self.model_info)
        bar.addPermanentWidget(self.zoom_info)

    def _action(self, text: str, slot, shortcut=None, *, checkable: bool = False, checked: bool = False) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            if isinstance(shortcut, QKeySequence.StandardKey):
                action.setShortcuts(shortcut)
            else:
                action.setShortcut(QKeySequence(shortcut))
        if checkable:
            action.setCheckable(True)
            action.setChecked(checked)
            action.toggled.connect(slot)
        else:
            action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.act_open = self._action("&Open…", self.open_dialog, K.Open)
        self.act_save = self._action("&Save", self.save, K.Save)
        self.act_save_as = self._action("Save &As…", self.save_as, K.SaveAs)
        self.act_close = self._action("&Close", lambda: self.close_tab(self.tabs.currentIndex()), K.Close)
        self.act_quit = self._action("&Quit", self.close, K.Quit)
        self.act_undo = self._action("&Undo", self.undo, K.Undo)
        self.act_redo = self._action("&Redo", self.redo, K.Redo)
        self.act_select_all = self._action("Select &All", self.select_all, K.SelectAll)
        self.act_find = self._action("&Find…", self.show_find, K.Find)
        self.act_find_next = self._action("Find &Next", self.find_panel.next, K.FindNext)
        self.act_find_prev = self._action("Find &Previous", self.find_panel.previous, K.FindPrevious)
        self.act_zoom_in = self._action("Zoom &In", lambda: self._view_call("zoom_in"), K.ZoomIn)
        self.act_zoom_out = self._action("Zoom &Out", lambda: self._view_call("zoom_out"), K.ZoomOut)
        self.act_zoom_fit = self._action("Zoom to &Fit", lambda: self._view_call("zoom_to_fit"), "Ctrl+0")
        self.act_zoom_sel = self._action("Zoom to &Selection", lambda: self._view_call("zoom_to_selection"),
                                         "Ctrl+Shift+0")
        self.act_main_graph = self._action("Show &Main Graph", self.show_main_graph, "Ctrl+Home")
        self.act_names = self._action("Node &Names", self._set_show_names, checkable=True,
                                      checked=self.settings.view_option("show_names"))
        self.act_attributes = self._action("&Attributes", self._set_display_options, checkable=True,
                                           checked=self.settings.view_option("show_attributes"))
        self.act_shapes = self._action("Tensor &Shapes", self._set_display_options, checkable=True,
                                       checked=self.settings.view_option("show_shapes"))
        self.act_initializers = self._action("&Initializers and Constants", self._set_display_options,
                                             checkable=True, checked=self.settings.view_option("show_initializers"))
        self.act_about = self._action("&About ONNX Studio", self.show_about)
        self.act_clear_recent = self._action("Clear Recent", self._clear_recent)
        self.act_close.setEnabled(False)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.act_open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addSeparator()
        file_menu.addAction(self.act_save)
        file_menu.addAction(self.act_save_as)
        file_menu.addAction(self.act_close)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        edit = bar.addMenu("&Edit")
        edit.addActions([self.act_undo, self.act_redo])
        edit.addSeparator()
        edit.addActions([self.act_select_all, self.act_find, self.act_find_next, self.act_find_prev])
        view = self.view_menu = bar.addMenu("&View")
        view.addActions([self.act_zoom_in, self.act_zoom_out, self.act_zoom_fit, self.act_zoom_sel])
        view.addSeparator()
        view.addAction(self.act_main_graph)
        view.addSeparator()
        boxes = view.addMenu("&Boxes Show")
        boxes.addActions([self.act_names, self.act_attributes, self.act_shapes, self.act_initializers])
        view.addSeparator()
        panels = view.addMenu("&Panels")
        for dock in self.docks:
            panels.addAction(dock.toggleViewAction())
        if self.theme is not None:
            theme_menu = view.addMenu("&Theme")
            self.theme_actions = {}
            for key, label in (("system", "Follow &System"), ("light", "&Light"), ("dark", "&Dark")):
                act = QAction(label, self)
                act.setCheckable(True)
                act.setChecked(self.theme.choice == key)
                act.triggered.connect(lambda _=False, k=key: self.set_theme(k))
                theme_menu.addAction(act)
                self.theme_actions[key] = act
        if self.problems is not None:
            tools = bar.addMenu("&Tools")
            self.act_full_check = self._action("Run &Full Check", self._full_check, "F7")
            tools.addAction(self.act_full_check)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_about)

    # -- tabs -------------------------------------------------------------------------------
    def current_tab(self) -> DocumentTab | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, DocumentTab) else None

    def tab_list(self) -> list[DocumentTab]:
        return [self.tabs.widget(i) for i in range(self.tabs.count())]

    def _on_current_tab(self, _index: int) -> None:
        tab = self.current_tab()
        for panel in self.panels:
            panel.set_tab(tab)
        self.stack.setCurrentWidget(self.tabs if tab is not None else self.start_page)
        for act in (self.act_save, self.act_save_as, self.act_close, self.act_select_all, self.act_find,
                    self.act_zoom_in, self.act_zoom_out, self.act_zoom_fit, self.act_zoom_sel, self.act_main_graph):
            act.setEnabled(tab is not None)
        self.registry.refresh()
        self._update_history()
        self._update_status()

    def close_tab(self, index: int) -> None:
        tab = self.tabs.widget(index)
        if not isinstance(tab, DocumentTab):
            return
        if tab.doc.is_modified and not self._confirm_discard(tab):
            return
        self.tabs.removeTab(index)
        tab.close_document()
        tab.deleteLater()
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
        """Show an already open Document (a new or recovered model) in a tab of its own."""
        request = LoadRequest(0, doc.path or Path("Untitled.onnx"), validator=validator)
        self._on_loaded(request, doc)
        return self.tab_list()[-1]

    # -- opening ---------------------------------------------------------------------------
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open Model", self.settings.last_dir(), MODEL_FILTER)
        for path in paths:
            self.open_path(path)

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
                          show_names=self.act_names.isChecked(), validator=request.validator,
                          options=self.display_options())
        tab.ready.connect(lambda t=tab: self._on_tab_ready(t))
        tab.busyChanged.connect(self._on_tab_busy)
        tab.progress.connect(lambda f, t=tab: self._on_tab_progress(t, f))
        tab.layoutFailed.connect(lambda msg: self.statusBar().showMessage(f"layout failed: {msg}", 8000))
        tab.layoutFailed.connect(self.layoutFailed)
        tab.canvas.view.zoomChanged.connect(self._update_zoom)
        doc.history_changed.connect(self._update_history)
        doc.clean_changed.connect(lambda _clean, t=tab: self._update_title(t))
        doc.path_changed.connect(lambda _p, t=tab: self._update_title(t))
        index = self.tabs.addTab(tab, tab.title())
        self.tabs.setTabToolTip(index, shown(str(doc.path or "")))
        self.tabs.setCurrentIndex(index)
        self._update_busy()
        if doc.path is not None:
            self.settings.add_recent(doc.path)
            self.settings.set_last_dir(str(doc.path.parent))
            self._refresh_recent()
        self.statusBar().showMessage(f"Opened {shown(request.path.name)}", 3000)

    def _on_tab_ready(self, tab: DocumentTab) -> None:
        self._update_busy()
        if tab is self.current_tab():
            self._update_status()
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

    # -- recent files -------------------------------------------------------------------------
    def _refresh_recent(self) -> None:
        recent = self.settings.recent_files()
        self.recent_menu.clear()
        for path in recent:
            act = self.recent_menu.addAction(shown(Path(path).name))
            act.setToolTip(shown(path))
            act.setStatusTip(shown(path))
            act.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if recent:
            self.recent_menu.addSeparator()
        self.recent_menu.addAction(self.act_clear_recent)
        self.act_clear_recent.setEnabled(bool(recent))
        self.start_page.set_recent(recent)

    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self._refresh_recent()

    # -- edit ------------------------------------------------------------------------------------
    def undo(self) -> None:
        tab = self.current_tab()
        if tab is not None and tab.doc.stack.can_undo:
            tab.doc.undo()

    def redo(self) -> None:
        tab = self.current_tab()
        if tab is not None and tab.doc.stack.can_redo:
            tab.doc.redo()

    def _update_history(self) -> None:
        tab = self.current_tab()
        stack = tab.doc.stack if tab is not None else None
        can_undo = bool(stack and stack.can_undo)
        can_redo = bool(stack and stack.can_redo)
        self.act_undo.setEnabled(can_undo)
        self.act_redo.setEnabled(can_redo)
        self.act_undo.setText(f"&Undo {stack.undo_label}" if can_undo else "&Undo")
        self.act_redo.setText(f"&Redo {stack.redo_label}" if can_redo else "&Redo")
        if tab is not None:
            self._update_title(tab)
        else:
            self.setWindowTitle("ONNX Studio")
            self.setWindowModified(False)

    def _update_title(self, tab: DocumentTab) -> None:
        index = self.tabs.indexOf(tab)
        if index >= 0:
            self.tabs.setTabText(index, tab.title())
        if tab is self.current_tab():
            name = shown(tab.doc.path.name) if tab.doc.path else "Untitled"
            self.setWindowTitle(f"{name}[*] — ONNX Studio")
            self.setWindowModified(tab.doc.is_modified)

    def select_all(self) -> None:
        tab = self.current_tab()
        if tab is not None:
            tab.canvas.view.select_keys(list(tab.canvas.scene.node_items()), center=False)

    def save(self) -> bool:
        tab = self.current_tab()
        if tab is None:
            return False
        if tab.doc.path is None:
            return self.save_as()
        if not confirm_invalid_save(self, tab):
            return False
        if not self.file_watch.confirm_overwrite(tab):
            return False
        try:
            tab.doc.save()
        except StudioError as exc:
            show_error(self, "Cannot save model", exc)
            return False
        self.statusBar().showMessage(f"Saved {shown(tab.doc.path.name)}", 3000)
        return True

    def save_as(self) -> bool:
        tab = self.current_tab()
        if tab is None:
            return False
        start = str(tab.doc.path or Path(self.settings.last_dir()) / "model.onnx")
        path, _ = QFileDialog.getSaveFileName(self, "Save Model As", start, MODEL_FILTER)
        if not path or not confirm_invalid_save(self, tab):
            return False
        if not self.file_watch.confirm_overwrite(tab, Path(path)):
            return False
        try:
            tab.doc.save(path)
        except StudioError as exc:
            show_error(self, "Cannot save model", exc)
            return False
        self.settings.add_recent(path)
        self._refresh_recent()
        return True

    # -- view ---------------------------------------------------------------------------------
    def show_find(self) -> None:
        self.find_dock.show()
        self.find_dock.raise_()
        self.find_panel.focus_query()

    def _full_check(self) -> None:
        self.problems_dock.show()
        self.problems_dock.raise_()
        self.problems.run_full_check()

    def show_main_graph(self) -> None:
        tab = self.current_tab()
        if tab is not None:
            tab.show_scope(tab.doc.index.main)

    def _view_call(self, method: str) -> None:
        tab = self.current_tab()
        if tab is not None:
            getattr(tab.canvas.view, method)()

    def _set_show_names(self, on: bool) -> None:
        self.settings.set_view_option("show_names", on)
        for tab in self.tab_list():
            tab.set_show_names(on)

    def display_options(self):
        from widgets.display_options import DisplayOptions

        return DisplayOptions(attributes=self.act_attributes.isChecked(), shapes=self.act_shapes.isChecked(),
                              initializers=self.act_initializers.isChecked())

    def _set_display_options(self, _on: bool = False) -> None:
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
        for key, act in self.theme_actions.items():
            act.setChecked(key == choice)

    def _on_theme(self, dark: bool) -> None:
        for tab in self.tab_list():
            tab.set_dark(dark)

    def _show_weights(self, target) -> None:
        tab = self.current_tab()
        if self.weights is not None:
            self.weights.show_tensor(tab.doc if tab is not None else None, target)

    def _update_zoom(self, zoom: float) -> None:
        self.zoom_info.setText(f"{zoom * 100:.0f}%")

    def _update_status(self) -> None:
        tab = self.current_tab()
        if tab is None:
            self.model_info.setText("")
            self.zoom_info.setText("")
            return
        doc = tab.doc
        total = sum(len(s.node_ids) for s in doc.index.scopes.values() if s.kind != "function")
        main = len(doc.main.node_ids)
        nodes = f"{main:,} nodes" if total == main else f"{main:,} nodes ({total:,} with subgraphs)"
        size = human_bytes(doc.file_size) if getattr(doc, "file_size", 0) else ""
        ext = ""
        store = getattr(doc, "store", None)
        if store is not None and store.files():
            ext = f" + {len(store.files())} external file{'s' if len(store.files()) != 1 else ''}"
        self.model_info.setText(" · ".join(x for x in (size + ext, nodes) if x))
        self._update_zoom(tab.canvas.view.zoom())

    def show_about(self) -> None:
        from widgets.about import show_about

        show_about(self)

    # -- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        for tab in self.tab_list():
            if tab.doc.is_modified and not self._confirm_discard(tab):
                event.ignore()
                return
        self.settings.save_window_state(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.loader.cancel()
        if self.problems is not None:
            self.problems.shutdown()
        for tab in self.tab_list():
            tab.close_document()
        super().closeEvent(event)
