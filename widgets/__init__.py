"""Qt views of ONNX Studio: the main window, the canvas (``widgets.canvas``), the panels
(``widgets.panels``) and the app entry point (``widgets.app.main``). They observe the
``editor`` core and change models only by executing its commands."""
