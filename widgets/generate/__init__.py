"""Text generation in the window: the Generate dock (the GUI of :mod:`editor.decoder`).

Public API:
- :func:`install_generate_dock` adds the "Generate" dock (bottom area, tabbed with the
  Compare Runs dock) and "Tools ▸ Generate Text…" to the main window and returns the dock.
- :class:`GenerateDock`: ``start()``, ``stop()``, ``wait()``, ``generation``, ``steps``.
"""

from __future__ import annotations

from widgets.generate.dock import GenerateDock

__all__ = ["GenerateDock", "install_generate_dock"]


def install_generate_dock(main_window) -> GenerateDock:  # noqa: ANN001
    """Add the Generate dock and its Tools menu action; returns the dock.

    Call it after the Compare Runs dock is installed and before ``restoreState``."""
    from widgets.actions.registry import ActionSpec
    from widgets.actions.view import register_dock
    from widgets.window.layout import add_bottom_dock

    dock = GenerateDock(main_window)
    add_bottom_dock(main_window, dock, beside=main_window.numeric_dock)

    def show() -> None:
        from widgets.docking import ensure_room

        dock.show()
        dock.raise_()
        ensure_room(main_window, dock)

    dock.show_action = main_window.registry.add(ActionSpec(
        "tools.generate", "Generate Text…", show, menu="Tools", section="2_compare",
        tip="Generate text with the current decoder model: tokens as they come, time per token",
        keywords="llm decoder prompt tokens generate genai"))
    register_dock(main_window, dock, "3")
    main_window.generate_dock = dock
    return dock
