"""``EditingController``: plugs editing into the application window.

``install_editing(window)`` adds the editing menus and shortcuts, the History and Python
Console docks, a context menu with the edits that apply to what is under the cursor, the
connect gesture, problem badges, the inline rename editor, crash-recovery writes, Save As
with external-data options and a Save / Discard / Cancel prompt on quit. It uses only the
window's public attributes (``tabs``, ``menuBar()``, ``statusBar()``, ``current_tab()``,
``tab_list()``, ``modelShown``) and signal connections / event filters on each tab's
GraphView; it never patches the window's or the canvas's classes.

# NOTE: dialogs are shown through ``self.run_dialog(dialog)`` (``dialog.exec()`` by
# default) so tests can fill a dialog in and press its accept path without a modal loop.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFileDialog, QInputDialog, QLineEdit, QMenu

from editor.commands import (
    AddGraphValue,
    DeleteNodes,
    RemoveGraphValue,
    SetNodeField,
    SetNodeInput,
)
from editor.errors import StudioError
from editor.recovery import RecoveryStore
from widgets.actions.context import context_menu
from widgets.actions.view import register_dock
from widgets.editing import actions_graph, actions_nodes, clipboard
from widgets.editing.attributes import AttributeDialog
from widgets.editing.badges import ProblemBadges
from widgets.editing.common import ELEM_TYPES, announce_with_undo, run_command, show_refusal
from widgets.editing.console import ConsolePanel
from widgets.editing.gesture import ConnectFilter
from widgets.editing.graph_io import DimensionDialog, GraphValueDialog, value_type
from widgets.editing.history import HistoryPanel
from widgets.editing.model import MetadataDialog, OpsetDialog, PassPreviewDialog
from widgets.editing.nodes import NodePalette, add_node_command, change_op_type_command, insert_on_edge_command
from widgets.editing.recovery import RecoveryDialog, RecoveryWriter
from widgets.editing.save import CANCEL, DISCARD, SAVE, SaveAsDialog, ask_unsaved, confirm_invalid_save
from widgets.editing.weights import (
    TensorGridDialog,
    cast_command,
    convert_command,
    delete_unused_command,
    find_weight,
    rename_command,
    replace_command,
)
from widgets.selection import Target

SOURCE = "editing"
#: a keyboard delete of more nodes than this says how many, with an Undo button
HANDFUL = 5


class TabHooks(QObject):
    """What editing attaches to one document tab."""

    def __init__(self, controller: EditingController, tab) -> None:
        super().__init__(tab)
        self.controller, self.tab = controller, tab
        self.connect = ConnectFilter(tab)
        self.badges = ProblemBadges()
        tab.canvas.scene.addItem(self.badges)
        self.recovery = RecoveryWriter(tab.doc, controller.recovery_store, self) if controller.recovery_store else None
        tab.canvas.view.viewport().installEventFilter(self)
        tab.canvas.controller.laidOut.connect(self.refresh_badges)
        self._after_layout: list = []
        tab.canvas.controller.laidOut.connect(self._run_after_layout)
        if tab.validator is not None:
            tab.validator.problems_changed.connect(self._on_problems)
        self.badge_refreshes = 0
        #: perf_counter() of the last badge refresh (benchmarks read it)
        self.badges_at = 0.0

    def _on_problems(self, _added, _removed) -> None:
        self.refresh_badges()

    def refresh_badges(self) -> None:
        v = self.tab.validator
        if v is None:
            return
        before = self.badges.sceneBoundingRect()
        self.badges.update_marks(self.tab.canvas.scene, self.tab.doc, v.problems, self.tab.scope_id)
        self.badge_refreshes += 1
        # NOTE: paint the badge region now. An edit's change signal also reaches views that
        # rebuild synchronously (outline, display graph: hundreds of ms on 10k nodes); the
        # badges would otherwise reach the screen only after all of them. Only the few boxes
        # under the marks repaint, so this costs ~1 ms.
        view = self.tab.canvas.view
        if view.isVisible():
            area = before.united(self.badges.sceneBoundingRect())
            if not area.isEmpty():
                rect = view.mapFromScene(area).boundingRect().adjusted(-2, -2, 2, 2)
                rect = rect.intersected(view.viewport().rect())
                if not rect.isEmpty():
                    view.viewport().repaint(rect)
        self.badges_at = time.perf_counter()

    def after_layout(self, fn) -> None:
        self._after_layout.append(fn)

    def _run_after_layout(self) -> None:
        pending, self._after_layout = self._after_layout, []
        for fn in pending:
            fn()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ContextMenu:
            self.controller.context_menu(self.tab, event.pos(), event.globalPos())
            return True
        return False

    def close(self) -> None:
        if self.recovery is not None:
            self.recovery.close()
        if self.tab.validator is not None:
            try:
                self.tab.validator.problems_changed.disconnect(self._on_problems)
            except (TypeError, ValueError, RuntimeError):
                pass


class EditingController(QObject):
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
        window.tabs.currentChanged.connect(lambda _i: self.sync())
        window.modelShown.connect(lambda _tab: self.sync())
        window.installEventFilter(self)
        properties = getattr(window, "properties", None)
        if properties is not None and hasattr(properties, "editRequested"):
            properties.editRequested.connect(self.edit_from_properties)
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

    # -- nodes ----------------------------------------------------------------------------
    def add_node(self, *, after: int | None = None, choice=None) -> int | None:
        tab = self._tab()
        if tab is None:
            return None
        if choice is None:
            palette = NodePalette(tab.doc, self.window)
            if not self.run_dialog(palette):
                return None
            choice = palette.choice()
        if choice is None:
            return None
        domain, op, need = choice
        nodes = self.selected_nodes(tab)
        after = after if after is not None else (nodes[-1] if nodes else None)
        cmd = add_node_command(tab.doc, tab.scope_id, domain, op, need, after=after)
        if not run_command(self.window, tab.doc, cmd):
            return None
        add = cmd.parts[-1] if hasattr(cmd, "parts") else cmd
        self.select_after_layout(tab, [Target.of_node(tab.scope_id, add.node_id)])
        return add.node_id

    def insert_on_edge(self, *, choice=None) -> str | None:
        tab = self._tab()
        picked = self.selected_value(tab)
        if tab is None or picked is None:
            self._refuse("select an edge (a value) or a single-output node to insert after")
            return None
        sid, value = picked
        if choice is None:
            palette = NodePalette(tab.doc, self.window, title=f"Insert Node on {value!r}")
            if not self.run_dialog(palette):
                return None
            choice = palette.choice()
        if choice is None:
            return None
        cmd, out = insert_on_edge_command(tab.doc, sid, value, *choice)
        return out if run_command(self.window, tab.doc, cmd) else None

    def delete_selected(self, *, reconnect: bool = False, announce: bool = False) -> bool:
        """Delete the selected nodes; ``announce`` (the Delete action, keyboard or menu):
        a delete of more than a handful says how many in the status bar, with Undo."""
        tab = self._tab()
        nodes = self.selected_nodes(tab)
        if tab is None or not nodes:
            return False
        ok = run_command(self.window, tab.doc, DeleteNodes(nodes, reconnect=reconnect))
        if ok:
            tab.selection.clear(SOURCE)
            if announce and len(nodes) > HANDFUL:
                announce_with_undo(self.window, tab.doc, f"Deleted {len(nodes):,} nodes")
        return ok

    def rename_node(self, nid: int, name: str) -> bool:
        tab = self._tab()
        return tab is not None and run_command(self.window, tab.doc, SetNodeField(nid, "name", name))

    def rename_inline(self, nid: int | None = None) -> QLineEdit | None:
        """A line edit over the node's box; Enter renames (one command), Esc cancels."""
        tab = self._tab()
        if tab is None:
            return None
        nid = self._one_node(tab, nid, "rename")
        if nid is None:
            return None
        view = tab.canvas.view
        item = tab.canvas.scene.item_for(f"n:{nid}")
        editor = QLineEdit(tab.doc.node(nid).name, view.viewport())
        editor.selectAll()
        if item is not None:
            r = view.mapFromScene(item.scene_rect()).boundingRect()
            editor.setGeometry(r.left(), r.top() + max(0, r.height() // 2 - 12), max(160, r.width()), 24)
        else:
            editor.move(20, 20)
        done = {"v": False}

        def commit() -> None:
            if done["v"]:
                return
            done["v"] = True
            text = editor.text()
            editor.deleteLater()
            if text != tab.doc.node(nid).name:
                self.rename_node(nid, text)

        class _Esc(QObject):
            def eventFilter(self_, obj, event) -> bool:  # noqa: N802, N805
                if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape:
                    done["v"] = True
                    editor.deleteLater()
                    return True
                return False

        esc = _Esc(editor)
        editor.installEventFilter(esc)
        editor.returnPressed.connect(commit)
        editor.editingFinished.connect(commit)
        editor.show()
        editor.setFocus()
        self._rename_editor = editor
        return editor

    def change_op_type(self, *, choice=None) -> bool:
        tab = self._tab()
        nid = self._one_node(tab, None, "change its op type")
        if tab is None or nid is None:
            return False
        if choice is None:
            palette = NodePalette(tab.doc, self.window, title="Change Op Type")
            if not self.run_dialog(palette):
                return False
            choice = palette.choice()
        if choice is None:
            return False
        return run_command(self.window, tab.doc, change_op_type_command(tab.doc, nid, *choice))

    def edit_attributes(self, nid: int | None = None) -> AttributeDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        nid = self._one_node(tab, nid, "edit its attributes")
        if nid is None:
            return None
        dialog = AttributeDialog(tab.doc, nid, self.window, open_scope=tab.show_scope)
        self.run_dialog(dialog)
        return dialog

    def edit_from_properties(self, target: Target, what: str) -> None:
        """The properties panel asked to edit a node's name or attributes."""
        tab = self._tab()
        if tab is None or target.node is None or not tab.doc.has_node(target.node):
            return
        if what == "name":
            self.rename_inline(target.node)
        else:
            self.edit_attributes(target.node)

    def disconnect_input(self, nid: int, index: int) -> bool:
        tab = self._tab()
        return tab is not None and run_command(self.window, tab.doc, SetNodeInput(nid, index, ""))

    # -- clipboard --------------------------------------------------------------------------
    def copy(self) -> int:
        tab = self._tab()
        nodes = self.selected_nodes(tab)
        if tab is None or not nodes:
            return 0
        n = clipboard.copy_nodes(tab.doc, tab.scope_id, nodes)
        self.window.statusBar().showMessage(f"Copied {n} node{'s' if n != 1 else ''}", 3000)
        return n

    def cut(self) -> int:
        n = self.copy()
        if n:
            self.delete_selected()
        return n

    def paste(self) -> list[int]:
        tab = self._tab()
        model = clipboard.clipboard_model()
        if tab is None or model is None:
            return []
        cmd = clipboard.paste_command(tab.doc, tab.scope_id, model)
        if cmd is None or not run_command(self.window, tab.doc, cmd):
            return []
        ids = clipboard.pasted_node_ids(cmd)
        self.select_after_layout(tab, [Target.of_node(tab.scope_id, i) for i in ids])
        return ids

    # -- graph inputs / outputs -------------------------------------------------------------
    def add_graph_value(self, kind: str) -> GraphValueDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = GraphValueDialog(tab.doc, tab.scope_id, kind, None, self.window)
        self.run_dialog(dialog)
        return dialog

    def _graph_value(self, tab) -> tuple[int, str, str] | None:
        picked = self.selected_value(tab)
        if picked is None:
            return None
        sid, name = picked
        scope = tab.doc.scope(sid)
        if name in scope.input_names():
            return sid, name, "input"
        if name in scope.output_names():
            return sid, name, "output"
        return None

    def edit_graph_value(self) -> GraphValueDialog | None:
        tab = self._tab()
        found = self._graph_value(tab) if tab is not None else None
        if found is None:
            self._refuse("select a graph input or output")
            return None
        sid, name, kind = found
        dialog = GraphValueDialog(tab.doc, sid, kind, name, self.window)
        self.run_dialog(dialog)
        return dialog

    def remove_graph_value(self) -> bool:
        tab = self._tab()
        found = self._graph_value(tab) if tab is not None else None
        if found is None:
            self._refuse("select a graph input or output")
            return False
        sid, name, kind = found
        return run_command(self.window, tab.doc, RemoveGraphValue(sid, kind, name))

    def make_output(self, value: tuple[int, str] | None = None) -> bool:
        tab = self._tab()
        picked = value or self.selected_value(tab)
        if tab is None or picked is None:
            self._refuse("select a value to make it a graph output")
            return False
        sid, name = picked
        tp = value_type(tab.doc, sid, name)
        elem, shape = None, None
        if tp is not None and tp.HasField("tensor_type"):
            tt = tp.tensor_type
            elem = tt.elem_type or None
            if tt.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]
        return run_command(self.window, tab.doc, AddGraphValue(sid, "output", name, elem, shape))

    def set_dimension(self, axis: int = 0) -> DimensionDialog | None:
        tab = self._tab()
        found = self._graph_value(tab) if tab is not None else None
        if tab is None:
            return None
        name = found[1] if found is not None else None
        dialog = DimensionDialog(tab.doc, tab.scope_id, name, axis, self.window, across=name is None)
        self.run_dialog(dialog)
        return dialog

    def set_batch_size(self) -> DimensionDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = DimensionDialog(tab.doc, tab.doc.index.main, None, 0, self.window, across=True)
        self.run_dialog(dialog)
        return dialog

    # -- weights ----------------------------------------------------------------------------
    def _weight(self, tab, target: Target | None = None):
        t = target
        if t is None:
            for cand in tab.selection.targets:
                if cand.kind == "tensor":
                    t = cand
                    break
        if t is None:
            nodes = self.selected_nodes(tab)
            if len(nodes) == 1 and tab.doc.node(nodes[0]).op_type == "Constant":
                out = tab.doc.node(nodes[0]).output[0]
                return find_weight(tab.doc, tab.doc.index.node_scope[nodes[0]], out, nodes[0])
            return None
        return find_weight(tab.doc, t.scope, t.name, t.node)

    def edit_weight_grid(self, w) -> TensorGridDialog | None:
        tab = self._tab()
        if tab is None or w is None:
            return None
        if w.elements > 10_000:
            self._refuse(f"{w.name!r} has {w.elements:,} elements: too big for the grid (replace it from .npy)")
            return None
        dialog = TensorGridDialog(tab.doc, w, self.window)
        self.run_dialog(dialog)
        return dialog

    def replace_weight(self, w, path: str | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.window, f"Replace {w.name} from .npy", "", "NumPy arrays (*.npy)")
            if not path:
                return False
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            self._refuse(f"cannot read {path!r}: {exc}")
            return False
        return run_command(self.window, tab.doc, replace_command(tab.doc, w, array))

    def cast_weight(self, w, elem_type: int | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if elem_type is None:
            names = [n for n, _ in ELEM_TYPES]
            name, ok = QInputDialog.getItem(self.window, "Cast", f"Cast {w.name} to", names, 0, False)
            if not ok:
                return False
            elem_type = dict(ELEM_TYPES)[name]
        try:
            cmd = cast_command(tab.doc, w, elem_type)
        except (StudioError, ValueError, TypeError) as exc:
            self._refuse(getattr(exc, "message", str(exc)))
            return False
        return run_command(self.window, tab.doc, cmd)

    def convert_weight(self, w) -> bool:
        tab = self._tab()
        return tab is not None and w is not None and run_command(self.window, tab.doc, convert_command(tab.doc, w))

    def rename_weight(self, w, new: str | None = None) -> bool:
        tab = self._tab()
        if tab is None or w is None:
            return False
        if new is None:
            new, ok = QInputDialog.getText(self.window, "Rename", f"New name for {w.name}", text=w.name)
            if not ok:
                return False
        return run_command(self.window, tab.doc, rename_command(tab.doc, w, new))

    def delete_unused(self) -> bool:
        tab = self._tab()
        if tab is None:
            return False
        cmd = delete_unused_command(tab.doc)
        if cmd is None:
            self.window.statusBar().showMessage("No unused initializers", 3000)
            return False
        return run_command(self.window, tab.doc, cmd)

    # -- model ------------------------------------------------------------------------------
    def edit_metadata(self) -> MetadataDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = MetadataDialog(tab.doc, self.window)
        self.run_dialog(dialog)
        return dialog

    def convert_opset(self) -> OpsetDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = OpsetDialog(tab.doc, self.window)
        self.run_dialog(dialog)
        return dialog

    def cleanup(self, key: str | None = None) -> PassPreviewDialog | None:
        tab = self._tab()
        if tab is None:
            return None
        dialog = PassPreviewDialog(tab.doc, key, self.window)
        self.run_dialog(dialog)
        return dialog

    def new_model(self):
        from editor.document import Document

        return self.open_document(Document.new())

    def open_document(self, doc):
        """Show ``doc`` (a new or recovered document) in a tab of its own."""
        from widgets.loader import LoadRequest

        validator = None
        try:
            from editor.validation import Validator

            validator = Validator(doc)
            validator.validate_all()
        except ImportError:
            pass
        if hasattr(self.window, "add_document"):
            self.window.add_document(doc, validator)
        else:  # a window without add_document: the path every loaded document takes
            request = LoadRequest(0, doc.path or Path("Untitled.onnx"), validator=validator)
            self.window._on_loaded(request, doc)  # noqa: SLF001
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
        """Ask Save / Discard / Cancel for every modified document of ``tabs`` (default:
        all); True to go on closing.

        Answers are collected first: a Cancel on the third model leaves the first two as
        they were (not saved, not marked discarded)."""
        if callable(tabs) and ask is None:  # confirm_close(ask) (older call form)
            tabs, ask = None, tabs
        ask = ask or self.ask_unsaved
        plan = []
        for tab in (self.window.tab_list() if tabs is None else tabs):
            if tab.doc.is_modified:
                answer = ask(self.window, tab.title().rstrip("*"))
                if answer == CANCEL:
                    return False
                plan.append((tab, answer))
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

    def ask_unsaved(self, parent, name: str) -> str:
        return ask_unsaved(parent, name)

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

    # -- context menu -----------------------------------------------------------------------
    def context_menu(self, tab, pos: QPoint, global_pos: QPoint, *, exec_menu: bool = True) -> QMenu:
        """The canvas's context menu (built from the registry, widgets.actions.context)."""
        return context_menu(self.window, tab, pos, global_pos, exec_menu=exec_menu)

    def node_weights(self, tab, nid: int) -> list:
        doc = tab.doc
        node = doc.node(nid)
        sid = doc.index.node_scope[nid]
        out = []
        if node.op_type == "Constant" and node.output:
            w = find_weight(doc, sid, node.output[0], nid)
            if w is not None:
                out.append(w)
        inits = doc.scope(sid).initializer_names()
        for name in node.input:
            if name and name in inits:
                w = find_weight(doc, sid, name)
                if w is not None:
                    out.append(w)
            elif name:
                producer = doc.producer(sid, name)
                if producer is not None and doc.node(producer).op_type == "Constant":
                    w = find_weight(doc, sid, name, producer)
                    if w is not None:
                        out.append(w)
        return out


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
