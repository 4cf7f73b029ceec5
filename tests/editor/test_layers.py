"""Layers point down: editor never imports widgets (static: imports inside functions
count too)."""

from __future__ import annotations

from tests.tools.layers import ImportGraph, build, imports_of, report


def test_no_upward_import() -> None:
    graph = build()
    assert graph.upward == [], report(graph)
    # the walk saw the real graph: the window and the program (widgets.cli) use the core
    assert graph.edges[("widgets", "editor.document")] > 0
    assert graph.edges[("widgets", "editor.cli")] > 0


def test_an_import_inside_a_function_is_seen(tmp_path) -> None:
    """The check cannot pass by missing a lazy import (how render once reached up)."""
    src = tmp_path / "mod.py"
    src.write_text("import importlib\n\ndef draw():\n    from widgets.canvas.export import export_rect\n"
                   "    import widgets.window.app\n    importlib.import_module('widgets.window.loader')\n")
    assert imports_of(src, "editor.cli.mod") == ["importlib", "widgets.canvas.export", "widgets.window.app", "widgets.window.loader"]
    graph = ImportGraph()
    assert "upward imports: 0" in report(graph)
