"""Tools and Help menus of the window itself: the full check, the command palette, the
Settings dialog (keyboard shortcuts), About.

(Other tools register from their features: compare, extract, Compare Runs.)"""

from __future__ import annotations

from widgets.actions.registry import ActionSpec


def register(window) -> None:
    window.registry.add_all([
        ActionSpec("tools.full_check", "Run &Full Check", lambda: full_check(window), "F7", "Tools", "1_check",
                   tip="Run the ONNX checker and full shape inference in the background"),
        ActionSpec("tools.palette", "&Command Palette…", lambda: show_palette(window), "Ctrl+Shift+P", "View",
                   "0_palette", tip="Search every action by name and run it", keywords="commands actions search"),
        ActionSpec("tools.settings", "&Settings…", lambda: show_settings(window), "Ctrl+,", "Edit", "9_settings",
                   tip="Preferences, keyboard shortcuts", keywords="preferences keyboard shortcuts keys bindings"),
        ActionSpec("help.about", "&About ONNX Studio", lambda: show_about(window), menu="Help"),
    ])


def show_palette(window):
    from widgets.actions.palette import show_palette as show

    return show(window)


def show_settings(window):
    from widgets.settings.dialog import SettingsDialog

    dialog = SettingsDialog(window)
    window.settings_dialog = dialog
    dialog.open()
    return dialog


def full_check(window) -> None:
    window.problems_dock.show()
    window.problems_dock.raise_()
    window.problems.run_full_check()


def show_about(window) -> None:
    from widgets.window.about import show_about as about

    about(window)
