"""``onnx-studio [MODEL] [--screenshot FILE] [--data-dir DIR]``: the desktop application.

Sets up the QApplication (high-DPI, Fusion style, theme following the system, app icon),
opens the main window on ``MODEL`` — or, with no model, on the start page (the first run,
with no recent files yet, opens the bundled sample so there is something to look at).

``--screenshot FILE`` runs offscreen: it opens the model, waits until it is on screen
(loaded and laid out), saves a PNG of the whole window and exits 0; on failure it prints one
``error: ...`` line and exits 2 (1 when the image cannot be written), like the CLI.
``--run`` also runs the model in the Run dock (random inputs, the child process) once it is
shown; with ``--screenshot`` the picture waits for the result, and a failed run exits 1.

When the window cannot start (Qt not importable, a system library missing, no display) it
prints one ``error: ...`` line saying what is missing and how to get it, and exits 2
(:mod:`widgets.window.qt_startup`), never a traceback or Qt's abort.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

SCREENSHOT_TIMEOUT_MS = 120_000
SCREENSHOT_SIZE = (1600, 1000)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="onnx-studio", description="ONNX Studio: open MODEL in the desktop app.")
    p.add_argument("model", nargs="?", help="model file to open (.onnx or ONNX text syntax)")
    p.add_argument("--screenshot", metavar="FILE", help="open offscreen, save a PNG of the window once the "
                   "model is shown, and exit")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding the model's external data")
    p.add_argument("--theme", choices=("system", "light", "dark"), help="appearance (default: the saved choice)")
    p.add_argument("--run", action="store_true", help="run the model in the Run dock once it is shown "
                   "(with --screenshot: wait for the result; a failed run exits 1)")
    return p


#: how long a thread may hold the GIL while another waits for it.
#: NOTE: the window's thread calls into Python briefly and often (a box's paint, an event
#: filter, a slot); while a worker thread computes in Python (the shape engine, the layout,
#: the checks), each of those calls waited up to the interpreter's default 5 ms for the GIL.
#: The export's window stopped for a third of a second while its shapes were computed after
#: the first picture; at 1 ms, 0.13 s. The workers lose nothing measurable (the export is
#: painted as soon).
GIL_SWITCH_S = 0.001


def create_application(argv: Sequence[str] = ()):
    """The QApplication (created once), with the app's identity and high-DPI policy."""
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtGui import QGuiApplication, QIcon
    from PySide6.QtWidgets import QApplication

    from widgets.settings.store import APPLICATION, ORGANIZATION

    app = QApplication.instance()
    if app is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        QCoreApplication.setOrganizationName(ORGANIZATION)
        QCoreApplication.setApplicationName(APPLICATION)
        from widgets.window.qt_startup import fatal_guard

        with fatal_guard():  # a missing display or library: one error line, not Qt's abort
            # NOTE: Fusion from the start (Qt's -style option), so the theme need not set it:
            # setStyle() hands the style to Python, and PySide6 then builds QStyle's twelve
            # enum types (~10 ms of GUI-thread CPU before the first picture)
            app = QApplication(["onnx-studio", "-style", "Fusion", *argv])
        app._studio_style = "Fusion"  # (the mark ThemeManager reads)
        sys.setswitchinterval(GIL_SWITCH_S)
    QGuiApplication.setApplicationDisplayName("ONNX Studio")
    QGuiApplication.setDesktopFileName("onnx-studio")
    try:
        from resources import app_icon_path

        icon = app_icon_path()
        if icon.is_file():
            app.setWindowIcon(QIcon(str(icon)))
    except Exception:  # noqa: BLE001 - an icon is not worth failing over
        pass
    return app


def create_window(*, theme_choice: str | None = None):
    """A MainWindow with settings and theme (the application must exist)."""
    from PySide6.QtWidgets import QApplication

    from resources import sample_model_path
    from widgets.window.main_window import MainWindow
    from widgets.settings.store import Settings
    from widgets.settings.theme import ThemeManager

    settings = Settings()
    theme = ThemeManager(QApplication.instance(), theme_choice or settings.theme())
    # the docks no first picture needs come after it (MainWindow.install_late_docks)
    window = MainWindow(settings=settings, theme=theme, sample=sample_model_path(), defer_docks=True)
    return window


def main(argv: Sequence[str] | None = None) -> int:
    from editor.collector import pause

    # no cyclic collection until the first picture (MainWindow.startupDone): the start-up
    # makes a heap of 150k live objects and next to no garbage
    resume_collector = pause()

    def resume_after_start_up() -> None:
        # NOTE: what the start-up made (modules, widgets, the model) lives as long as the
        # window or the model: frozen first, the collector's first pass after the pause does
        # not walk it all (51 ms on the GUI thread with the 11.8k-node export open)
        from editor.runtime.memory import freeze_heap

        freeze_heap()
        resume_collector()

    try:
        return _main(argv, resume_after_start_up)
    finally:
        resume_collector()


def _main(argv: Sequence[str] | None, resume_collector) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from widgets.window.qt_startup import QtStartupError, check_display, import_qt

    if args.model:
        from editor.io.prefetch import prefetch

        prefetch(args.model)  # its bytes are read while Qt and the window start
    _import_core_first()
    try:
        import_qt()
        if not args.screenshot:
            check_display()
    except QtStartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.screenshot:
        return _screenshot(args, resume_collector)
    create_application()
    window = create_window(theme_choice=args.theme)
    window.when_started_up(resume_collector)
    from editor.recovery import RecoveryStore

    window.editing.enable_recovery(RecoveryStore())  # recovery copies; offers a crash's leftovers
    window.show()
    from PySide6.QtWidgets import QApplication

    if args.run:  # once, for the model of the command line (not for the ones opened later)
        def run_once(_tab) -> None:
            window.modelShown.disconnect(run_once)
            window.run_dock.run()

        window.modelShown.connect(run_once)
    if args.model:
        window.open_path(args.model, data_dir=args.data_dir)
    elif not window.settings.recent_files() and window.start_page.sample_path is not None:
        # first run: something to look at; afterwards the start page offers sample and recents
        window.open_path(window.start_page.sample_path)
    return QApplication.instance().exec()


def _import_core_first() -> None:
    """Import the Qt-free modules the first picture needs before Qt.

    NOTE: once PySide6 is imported, its import hook reads the source of every module
    imported after it (``shibokensupport.feature``: does the module use PySide6?), 0.15-0.2 s
    of start-up CPU over ~500 modules; onnx, numpy, protobuf and the core imported first
    skip it (~200 modules)."""
    import onnx  # noqa: F401

    import editor.document  # noqa: F401
    import editor.layout  # noqa: F401
    import editor.validation  # noqa: F401
    import editor.viewmodel  # noqa: F401


def _screenshot(args: argparse.Namespace, resume_collector) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # a throw-away settings file: a screenshot must not touch the user's recent files
    tmp = tempfile.TemporaryDirectory(prefix="onnx-studio-shot-")
    result: dict[str, object] = {}
    stop = {"fn": None}

    def on_signal(signum: int) -> None:
        # NOTE: no raise from here: a signal during start-up lands inside an import or a Qt
        # callback, where an exception breaks the import or is swallowed. It is noted and
        # acted on once the window exists, before the event loop starts.
        stop["signum"] = signum
        if stop["fn"] is not None:
            stop["fn"](signum)

    restore = _quit_on_signals(on_signal)
    try:
        return _shoot(args, tmp.name, result, stop, resume_collector)
    finally:
        restore()
        tmp.cleanup()


def _shoot(args: argparse.Namespace, settings_dir: str, result: dict, stop: dict, resume_collector) -> int:
    from PySide6.QtCore import QSettings, QTimer

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    app = create_application()
    window = create_window(theme_choice=args.theme or "light")
    window.when_started_up(resume_collector)
    window.interactive_errors = False
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    from resources import sample_model_path

    model = args.model or str(sample_model_path())

    def finish(code: int, message: str | None = None) -> None:
        if "code" in result:
            return
        result["code"] = code
        if message:
            print(f"error: {message}", file=sys.stderr)
        app.quit()

    def shoot(tab=None) -> None:
        if tab is not None and "painted" not in result:
            watch_first_paint(tab.canvas.view.viewport(), result)
        # let the final layout paint, then grab
        QTimer.singleShot(150, save)

    def run_then_shoot(tab=None) -> None:
        if tab is not None:
            watch_first_paint(tab.canvas.view.viewport(), result)
        dock = window.run_dock
        controller = dock.controller
        if controller is None or not dock.run():
            finish(1, f"cannot run '{model}' in the Run dock")
            return
        controller.finished.connect(ran)

    def ran(run_result) -> None:
        if not run_result.ok:
            from widgets.run.controller import describe_failure

            finish(1, f"cannot run '{model}': {describe_failure(run_result)}")
            return
        shoot()

    def save() -> None:
        out = Path(args.screenshot)
        image = window.grab()
        if image.isNull() or not image.save(str(out), "PNG"):
            finish(1, f"cannot write screenshot '{out}'")
            return
        painted = result.get("painted")
        when = f", model painted {painted:.2f} s after start" if isinstance(painted, float) else ""
        print(f"{out}: {image.width()}x{image.height()}{when}", file=sys.stderr)
        finish(0)

    def watch_new_tab(_index: int) -> None:
        # watched from the tab's birth: its first picture is painted before modelShown (the
        # window puts it on screen, then fills the panels)
        tab = window.current_tab()
        if tab is not None and "painted" not in result:
            watch_first_paint(tab.canvas.view.viewport(), result, when=lambda t=tab: t.is_ready)

    window.tabs.currentChanged.connect(watch_new_tab)
    window.modelShown.connect(run_then_shoot if args.run else shoot)
    window.loadFailed.connect(lambda message: finish(2, message))
    window.layoutFailed.connect(lambda message: finish(1, f"cannot lay out '{model}': {message}"))
    QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, lambda: finish(2, f"timed out after {SCREENSHOT_TIMEOUT_MS // 1000} s "
                                                              f"waiting for '{model}' to be shown"))
    # a timer hands control to Python a few times a second, so a signal's handler runs
    tick = QTimer()
    tick.timeout.connect(lambda: None)
    tick.start(200)
    stop["fn"] = lambda signum: finish(128 + signum, f"stopped by signal {signum}")
    if "signum" in stop:  # a signal came while Qt was starting
        stop["fn"](stop["signum"])
    else:
        window.open_path(model, data_dir=args.data_dir)
    if "code" not in result:
        app.exec()
    tick.stop()
    window.close()
    return int(result.get("code", 2))


def process_age() -> float | None:
    """Seconds since this process started (Linux: /proc; elsewhere None). Start-up time is
    measured from the exec, so interpreter start-up and imports count too."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time after boot
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def watch_first_paint(viewport, result: dict[str, object], when=None) -> None:
    """Record in ``result["painted"]`` the process age when ``viewport`` next paints (the first
    frame of the model on the canvas); with ``when``, the first paint once ``when()`` holds
    (the model laid out, not the empty canvas)."""
    from PySide6.QtCore import QEvent, QObject

    class FirstPaint(QObject):
        def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint and (when is None or when() or "painted" in result):
                result.setdefault("painted", process_age())
                viewport.removeEventFilter(self)
            return False

    watcher = FirstPaint(viewport)
    viewport.installEventFilter(watcher)
    viewport.update()


def _quit_on_signals(handler) -> callable:
    """SIGTERM / SIGINT / SIGHUP call ``handler(signum)``; returns a function that restores
    the previous handlers.

    NOTE: with Python's default handling a SIGTERM killed the process where it stood and left
    the screenshot's temporary folder behind; the handler quits the event loop (or stops the
    start-up before it) so the folder is removed on the way out."""
    import signal

    names = [n for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), lambda signum, _frame: handler(signum)) for n in names}

    def restore() -> None:
        for n, old in previous.items():
            signal.signal(getattr(signal, n), old)

    return restore


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
