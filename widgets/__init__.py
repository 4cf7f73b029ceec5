"""Qt views of ONNX Studio. They observe the ``editor`` core and change models only by
executing its commands.

Where a feature lives (one package per room; the top level holds only the entry points
``cli.py`` and ``__main__.py``):

- ``window``: the application, the main window's wiring, tabs, loading, start-up checks;
- ``canvas``: the graph view (scene, items, hit testing, minimap, export drawing);
- ``panels``: the docks around the canvas (properties, outline, find, problems, cost ...);
- ``editing``: edits from the window (attribute editors, gestures, history, save, surgery);
- ``run``, ``numeric``, ``compare``: running models, Compare Runs, the Diff dock;
- ``overlays``, ``view``: what the canvas draws over its boxes and what boxes show;
- ``actions``: the action registry, menus and the command palette;
- ``export``, ``settings``, ``common``: pictures out of the window, preferences, small helpers.
"""
