"""``onnx-studio``: every subcommand of :mod:`editor.cli`, plus the ones that draw with Qt,
and the window when no subcommand is given.

This is the composition root: it lives in the Qt layer and wires the window, ``render``
and ``diff --render`` into the core's command line, so the core never reaches up into the views
(``tests/tools/layers.py`` checks the direction). ``python -m widgets`` is the same program.

``onnx-studio [MODEL]`` opens the GUI (on the bundled sample model when none is given);
``onnx-studio SUBCOMMAND ...`` runs a headless tool (see :mod:`editor.cli`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from editor import cli as core_cli
from editor.cli import SUBCOMMANDS, emit_json, module_name  # noqa: F401 - the CLI's facade

core_cli.register("render", "draw a model's graph to PNG or SVG, or an interactive web page (.html)",
                  module="widgets.export.render")
# the core's diff, plus --render: both models side by side, coloured (needs Qt)
core_cli.register("diff", core_cli.SUBCOMMANDS["diff"], module="widgets.diffview.render")


def main(argv: Sequence[str] | None = None) -> int:
    return core_cli.main(argv, gui=gui)


def gui(argv: list[str]) -> int:
    """Start the desktop app. Qt is imported here only, never by the core."""
    try:
        app = importlib.import_module("widgets.window.app")
    except ImportError as exc:
        print(f"error: the window is not part of this installation ({exc}); reinstall onnx-studio",
              file=sys.stderr)
        return 2
    return int(app.main(argv) or 0)
