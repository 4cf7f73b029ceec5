"""Value actions as registry data: F2 renames what is selected; the value menu of an edge
(its right-click) and of a graph input/output box: rename, find its consumers; the menu
also holds the actions other features declare for these contexts (copy the name, make it
a graph output, capture it in a run).

Each acts on the selection (a right-click on an edge selects its value first, as a left
click does), so the same action runs from the menu, the palette and the context menu. The
work is the controller's (:mod:`widgets.editing.edits_values`); see actions_nodes."""

from __future__ import annotations

from widgets.actions.registry import ActionSpec

#: the context menus that stand for one value: an edge, a graph input/output box
VALUE_CONTEXTS = ("edge", "value")


def register(window, ctl) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    window.registry.add_all([
        ActionSpec("edit.rename", "Re&name…", ctl.rename_selected, "F2", "Edit", "3_rename", enabled_when=has_tab,
                   tip="Rename the selected node, or the selected value (an edge) everywhere it is used",
                   keywords="node value tensor edge name"),
        ActionSpec("value.rename", "Rename &Value…", ctl.rename_value_inline, menu="Graph", section="4_value",
                   enabled_when=has_tab, contexts=VALUE_CONTEXTS, context_section="1_edit",
                   tip="Rename the selected value: its producer, every use, graph inputs and outputs follow",
                   keywords="tensor edge name"),
        ActionSpec("value.consumers", "Select &Consumers", ctl.select_consumers, menu="Graph", section="4_value",
                   enabled_when=has_tab, contexts=VALUE_CONTEXTS, context_section="2_value",
                   tip="Select every node that reads the selected value", keywords="find uses readers edge"),
    ])
