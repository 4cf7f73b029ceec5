"""``EditingController``: plugs editing into the application window.

``install_editing(window)`` registers the editing actions (``actions_nodes``,
``actions_values``, ``actions_graph``: menus, keys and the canvas's context menu come
from the registry), adds the History and Python Console docks, and attaches to each tab
the connect gesture, problem badges and crash-recovery writes (``hooks``). The edits
themselves live in four mixins, one module each: nodes and the clipboard
(``edits_nodes``), values (``edits_values``), graph I/O, weights and the model
(``edits_graph``), new documents, saving, closing and recovery (``session``). It uses
only the window's public attributes (``tabs``, ``menuBar()``, ``statusBar()``, ``current_tab()``,
``tab_list()``, ``modelShown``) and signal connections / event filters on each tab's
GraphView; it never patches the window's or the canvas's classes.

# NOTE: dialogs are shown through ``self.run_dialog(dialog)`` (``dialog.exec()`` by
# default) so tests can fill a dialog in and press its accept path without a modal loop.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPoint, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLineEdit, QMenu

from editor.recovery import RecoveryStore
from widgets.actions.context import context_menu
from widgets.actions.view import register_dock
from widgets.editing import actions_graph, actions_nodes, actions_values
from widgets.editing.common import show_refusal
from widgets.editing.console import ConsolePanel
from widgets.editing.edits_graph import GraphEdits
from widgets.editing.edits_nodes import SOURCE, NodeEdits
from widgets.editing.edits_values import ValueEdits
from widgets.editing.history import HistoryPanel
from widgets.editing.hooks import TabHooks
from widgets.editing.session import SessionEdits
from widgets.common.selection import Target


class EditingController(NodeEdits, ValueEdits, GraphEdits, SessionEdits, QObject):
    """Editing in one window: docks, per-tab hooks, the selection helpers the edit
    mixins share (nodes, values, graph and model, session: one module each)."""

    def __init__(self, window, *, recovery_store: RecoveryStore | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.recovery_store = recovery_store
        self.hooks: dict[int, TabHooks] = {}
        self.run_dialog = lambda dialog: dialog.exec()
        self._rename_editor: QLineEdit | None = None
        self._build_docks()
        actions_nodes.register(window, self)
        actions_graph.register(window, self)
        actions_values.register(window, self)
        window.tabs.currentChanged.connect(lambda _i: self.sync())
        window.modelShown.connect(lambda _tab: self.sync())
        window.installEventFilter(self)
        window.properties.editRequested.connect(self.edit_from_properties)
        window.properties.renameRequested.connect(self.rename_from_properties)
        self.sync()

    def _build_docks(self) -> None:
        win = self.window
        self.history = HistoryPanel(win)
        self.console = ConsolePanel(win)
        self.history_dock = QDockWidget("History", win)
        self.history_dock.setObjectName("dock_history")
        self.history_dock.setWidget(self.history)
        self.console_dock = QDockWidget("Python Console", win)
        self.console_dock.setObjectName("dock_console")
        self.console_dock.setWidget(self.console)
        win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.history_dock)
        win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.console_dock)
        self.console_dock.hide()
        register_dock(win, self.history_dock, "2")
        register_dock(win, self.console_dock, "2")

    def sync(self) -> None:
        """Attach hooks to new tabs, drop closed ones, point the docks at the current doc."""
        tabs = {id(t): t for t in self.window.tab_list()}
        for key in list(self.hooks):
            if key not in tabs:
                self.hooks.pop(key).close()
        for key, tab in tabs.items():
            if key not in self.hooks:
                self.hooks[key] = TabHooks(self, tab)
                tab.destroyed.connect(lambda _=None, k=key: self._forget(k))
        tab = self.window.current_tab()
        doc = tab.doc if tab is not None else None
        self.history.set_document(doc)
        self.console.set_document(doc)
        self.window.registry.refresh()

    def _forget(self, key: int) -> None:
        hooks = self.hooks.pop(key, None)
        if hooks is not None:
            hooks.close()

    def hooks_for(self, tab) -> TabHooks:
        self.sync()
        return self.hooks[id(tab)]

    # -- selection helpers ----------------------------------------------------------------
    def _tab(self):
        return self.window.current_tab()

    def selected_nodes(self, tab=None) -> list[int]:
        tab = tab or self._tab()
        if tab is None:
            return []
        return [t.node for t in tab.selection.targets if t.kind == "node" and t.node is not None
                and tab.doc.has_node(t.node)]

    def selected_value(self, tab=None) -> tuple[int, str] | None:
        """The selected value (an edge, a graph input/output), else the single output of
        the single selected node."""
        tab = tab or self._tab()
        if tab is None:
            return None
        for t in tab.selection.targets:
            if t.kind in ("value", "tensor"):
                return t.scope, t.name
        nodes = self.selected_nodes(tab)
        if len(nodes) == 1:
            outs = [o for o in tab.doc.node(nodes[0]).output if o]
            if len(outs) == 1:
                return tab.doc.index.node_scope[nodes[0]], outs[0]
        return None

    def select_after_layout(self, tab, targets: list[Target]) -> None:
        self.hooks_for(tab).after_layout(lambda: tab.selection.select(targets, SOURCE))

    def _refuse(self, message: str) -> None:
        show_refusal(self.window, message)

    def _one_node(self, tab, nid: int | None, purpose: str) -> int | None:
        """``nid`` when given, else the single selected node; refused (``select one node
        to <purpose>``) and ``None`` when the selection is not exactly one node."""
        if nid is not None:
            return nid
        nodes = self.selected_nodes(tab)
        if len(nodes) != 1:
            self._refuse(f"select one node to {purpose}")
            return None
        return nodes[0]

    # -- context menu -----------------------------------------------------------------------
    def context_menu(self, tab, pos: QPoint, global_pos: QPoint, *, exec_menu: bool = True) -> QMenu:
        """The canvas's context menu (built from the registry, widgets.actions.context)."""
        return context_menu(self.window, tab, pos, global_pos, exec_menu=exec_menu)


def install_editing(window, *, recovery_store: RecoveryStore | None = None,
                    offer_recovery: bool = False) -> EditingController:
    """Add editing to ``window`` (a MainWindow); returns the controller (kept on the
    window as ``window.editing``)."""
    controller = EditingController(window, recovery_store=recovery_store)
    window.editing = controller
    from widgets.editing.surgery import SurgeryActions  # the Surgery menu (fp16, append model, I/O types)

    controller.surgery = SurgeryActions(controller)
    if offer_recovery:
        QTimer.singleShot(0, controller.offer_recovery)
    return controller
