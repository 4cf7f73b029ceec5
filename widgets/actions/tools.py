"""Tools and Help menus of the window itself: the full check, About.

(Other tools register from their features: compare, extract, Compare Runs, the palette.)"""

from __future__ import annotations

from widgets.actions.registry import ActionSpec


def register(window) -> None:
    window.registry.add_all([
        ActionSpec("tools.full_check", "Run &Full Check", lambda: full_check(window), "F7", "Tools", "1_check",
                   tip="Run the ONNX checker and full shape inference in the background"),
        ActionSpec("help.about", "&About ONNX Studio", lambda: show_about(window), menu="Help"),
    ])


def full_check(window) -> None:
    window.problems_dock.show()
    window.problems_dock.raise_()
    window.problems.run_full_check()


def show_about(window) -> None:
    from widgets.about import show_about as about

    about(window)
