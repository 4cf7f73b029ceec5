"""Editing in the window: attribute editors, node palette, connect gesture, clipboard,
graph input/output and dimension dialogs, weight editing, model properties, clean-up and
opset-conversion previews, history panel, Python console, crash recovery, Save As options
and the close prompt. Every edit is a command from ``editor.commands`` pushed on the
document's undo stack; refusals are shown, never raised.

Entry point: :func:`install_editing` (adds everything to a MainWindow).
"""

from widgets.editing.controller import EditingController, install_editing

__all__ = ["EditingController", "install_editing"]
