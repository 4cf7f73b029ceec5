"""Find shows its matches without rearranging the graph: only the current match's closed
groups open (a one-letter query used to open dozens while typing), the other matches in
closed groups are marked by their group's box, and the breadcrumb names where the current
match lies after every step (F3 moved the match but left the breadcrumb behind)."""

from __future__ import annotations

from tests.widgets.conftest import open_model
from tests.widgets.test_edit_support import SILERO


def _settle(qtbot, tab, target) -> str:
    """Wait until a box that stands for ``target`` is drawn and selected (a group it lies
    in may open first); returns that box's key."""
    def shown():
        selected = set(tab.canvas.scene.selected_keys())
        return next((k for k in tab.keys_for(target) if k in selected), None)

    qtbot.waitUntil(lambda: shown() is not None, timeout=30_000)
    return shown()


def test_find_opens_only_the_current_match_and_the_breadcrumb_follows_f3(qtbot, window):
    tab = open_model(qtbot, window, SILERO)
    doc, canvas = tab.doc, tab.canvas
    before = set(canvas.controller.expanded())
    panel = window.find_panel
    panel.query.setText("e")
    panel.run()
    nodes = [m.target.node for m in panel.matches if m.target.kind == "node" and m.target.scope == doc.index.main]
    scope = doc.scope(doc.index.main)
    tree = tab._tree()
    every = {p for n in nodes for p in tree.chain(scope.position(n))} - before
    assert len(every) >= 5, f"the query must hit many closed groups to mean anything: {sorted(every)}"
    first = panel.matches[0].target
    _settle(qtbot, tab, first)
    opened = set(canvas.controller.expanded()) - before
    mine = set(tree.chain(scope.position(first.node))) if first.kind == "node" else set()
    assert opened <= mine, (f"expected only the current match's groups to open ({sorted(mine)}), "
                            f"{len(opened)} opened: {sorted(opened)[:8]}")
    # the matches still hidden are marked: their closed group's box is selected
    now = set(canvas.controller.expanded())
    hidden = [n for n in nodes if canvas.scene.item_for(f"n:{n}") is None
              and any(p not in now for p in tree.chain(scope.position(n)))]
    assert hidden, "some matches stay inside closed groups"
    marked = set(canvas.scene.selected_keys())
    unmarked = [n for n in hidden if not any(f"g:{p}" in marked for p in tree.chain(scope.position(n)))]
    assert unmarked == [], f"expected a selected group box over every hidden match, not over {unmarked[:5]}"
    # F3 steps through matches in several groups: each is shown, and the breadcrumb names
    # the scope it lies in
    panel.query.setText("op:Conv")
    panel.run()
    paths = set()
    for _ in range(len(panel.matches)):
        window.registry.run("edit.find_next")
        current = tab.selection.current
        if current.kind != "node" or current.scope != doc.index.main or doc.node(current.node).op_type == "Constant":
            continue  # a Constant is drawn as a weight row of its consumers, not as a box
        key = _settle(qtbot, tab, current)
        want = canvas.controller.scope_of(key)
        assert canvas.breadcrumb.path() == want, \
            f"after F3 to {key} the breadcrumb says {canvas.breadcrumb.path()!r}, expected {want!r}"
        paths.add(want)
    assert len(paths) >= 2, f"the steps must cross scopes to test the breadcrumb: {paths}"
