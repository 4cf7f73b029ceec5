"""The application layer: the program ``onnx-studio`` and what needs both the core and Qt.

Layers, top to bottom (each imports only the ones below it):

    onnx_studio   the command line users run: the window, ``render``, every core subcommand
    widgets       the Qt window, canvas and panels
    editor        the Qt-free core (documents, commands, layout, runtime, the headless CLI)

This package is the composition root: it wires the window into the command line, so the
core never reaches up into the views (``tests/tools/layers.py`` checks the direction).
"""
