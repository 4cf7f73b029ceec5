"""Value edits of the :class:`~widgets.editing.controller.EditingController`: rename a
value (tensor name) in place on the canvas, F2 for whatever is selected, select a value's
consumers.

A value is renamed with the core's :class:`~editor.commands.RenameValue` (one undo step):
its producer, every use (bodies that capture it included), graph inputs and outputs,
value_info and initializers follow. The registry entries are declared in
:mod:`widgets.editing.actions_values`.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QLineEdit

from editor.commands import RenameValue
from widgets.common.selection import Target
from widgets.editing.common import run_command
from widgets.editing.inline_edit import HEIGHT, MIN_WIDTH, inline_editor

SOURCE = "editing"
#: the tab's own source tag: a selection made with it is not revealed again on the canvas
CANVAS = "canvas"


class ValueEdits:
    """Mixin of the controller (``self.window``, ``self._tab()``, ``self.selected_value`` ...)."""

    def rename_selected(self) -> QLineEdit | None:
        """F2: rename what is selected, a value (an edge, a graph input/output, a tensor
        picked in a panel) or else a node."""
        tab = self._tab()
        if tab is None:
            return None
        if any(t.kind in ("value", "tensor") for t in tab.selection.targets):
            return self.rename_value_inline()
        if len(self.selected_nodes(tab)) == 1:
            return self.rename_inline()
        self._refuse("select a node or a value (click an edge) to rename")
        return None

    def rename_value_inline(self, value: tuple[int, str] | None = None) -> QLineEdit | None:
        """A line edit over the value on the canvas (its graph input/output box, else the
        start of its edge); Enter renames it everywhere (one command), Esc cancels."""
        tab = self._tab()
        picked = value or (self.selected_value(tab) if tab is not None else None)
        if tab is None or picked is None:
            self._refuse("select a value (click an edge) to rename")
            return None
        sid, name = picked
        self._rename_editor = inline_editor(tab.canvas.view, name, self._value_anchor(tab, name),
                                            lambda text: self.rename_value(sid, name, text))
        return self._rename_editor

    def _value_anchor(self, tab, name: str) -> QRect | None:
        """Where the value is drawn (viewport coordinates): its input/output box, else just
        below the producer's port, where the edge and its shape label start."""
        view, scene = tab.canvas.view, tab.canvas.scene
        for key in (f"in:{name}", f"out:{name}"):
            item = scene.item_for(key)
            if item is not None:
                return view.mapFromScene(item.scene_rect()).boundingRect()
        for edge, route, _ in (scene.edge_geometry().routed if scene.edge_geometry() is not None else ()):
            if edge.value == name:
                start = view.mapFromScene(*route[0])
                return QRect(start.x() - MIN_WIDTH // 2, start.y() + 4, MIN_WIDTH, HEIGHT)
        return None

    def rename_value(self, sid: int, old: str, new: str) -> bool:
        """Rename value ``old`` of scope ``sid`` to ``new`` (refused with the reason when
        the name is taken); the selection follows the value to its new name."""
        tab = self._tab()
        if tab is None or not run_command(self.window, tab.doc, RenameValue(sid, old, new)):
            return False
        scene = tab.canvas.scene
        # the selection follows the value as it was shown: its edge, its input/output box
        # (``in:x``, a body's ``in:@<owner>/<attr>:x``), else as panels show a value
        as_edge = scene.selected_value() == old
        boxes = [key[:-len(old)] + new for key in scene.selected_keys()
                 if key.startswith(("in:", "out:")) and key.endswith(old)
                 and key[:-len(old)].endswith(":")]
        # panels follow at once; the canvas draws the new name after its relayout
        tab.selection.select([Target.of_value(sid, new)], CANVAS)
        if as_edge:
            self.hooks_for(tab).after_layout(lambda: scene.click_value(new))
        elif boxes:
            self.hooks_for(tab).after_layout(lambda: scene.select_keys(boxes))
        else:
            self.select_after_layout(tab, [Target.of_value(sid, new)])
        return True

    def rename_from_properties(self, target: Target, new: str) -> bool:
        """The Properties panel's Name row of a value was edited; a refusal puts the old
        name back there (the status bar says why)."""
        ok = self.rename_value(target.scope, target.name, new)
        if not ok:
            self.window.properties.show_target(target)
        return ok

    def select_consumers(self, value: tuple[int, str] | None = None) -> int:
        """Select (and show) every node that reads the selected value, nested bodies
        included; returns how many."""
        tab = self._tab()
        picked = value or (self.selected_value(tab) if tab is not None else None)
        if tab is None or picked is None:
            self._refuse("select a value (click an edge) to find its consumers")
            return 0
        sid, name = picked
        doc = tab.doc
        nodes = [nid for nid, _ in doc.consumers(sid, name, nested=True)]
        if not nodes:
            self.window.statusBar().showMessage(f"Nothing reads {name!r}", 5000)
            return 0
        tab.selection.select([Target.of_node(doc.index.node_scope[n], n) for n in dict.fromkeys(nodes)], SOURCE)
        self.window.statusBar().showMessage(f"{len(set(nodes))} node{'s' if len(set(nodes)) != 1 else ''} "
                                            f"read {name!r}", 5000)
        return len(set(nodes))
