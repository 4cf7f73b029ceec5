"""Expanding a group in the window against the same layout headless (issue 30; not part of
the default test run).

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_expand_window.py [MODEL.onnx ...]

Without models it builds the 3.6k-node int8 TTS stand-in (``fixtures/tts_standin.py``: one
``/encoder`` scope of 3,440 nodes, com.microsoft fused ops). For each model the real
window (offscreen, default docks) opens it and, once everything it started on open has
finished, the user's gestures run through the event loop:

* **expand the largest group** of the first view (as a double-click does);
* **Collapse All**, then a double-click on the largest group of the top level (the 3.4k-node
  ``encoder`` of issue 30);
* **Expand Selected Groups** on that group from the top level (every group inside it open,
  in frames: the compound layout at its biggest);
* **Expand All** (the flat view).

Each is timed until its picture is on screen, against ``layout_graph`` of the same display
model in this process (with the picture before it as ``previous``, as the window passes
it); the last column is the layout of ``onnx-studio render --expanded`` (the flat view,
columns included) for scale.

Times are CPU seconds of the whole process (the layout runs on a worker thread; threads
count), so a loaded machine does not inflate them; wall seconds are printed beside. The
target: the window within 2 s of the headless layout. Exit status 1 when missed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_S = 2.0


def _wait(app, cond, timeout: float = 300.0) -> None:
    from PySide6.QtCore import QEventLoop

    t = time.perf_counter()
    while not cond():
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if time.perf_counter() - t > timeout:
            raise TimeoutError("the window did not finish in time")


def _settle(app, win) -> None:
    """Until what opening started is done (the Cost panel's job and its table)."""
    win.cost.wait(600_000)
    t = time.perf_counter()
    while time.perf_counter() - t < 1.0:
        app.processEvents()


def _timed(app, controller, start) -> tuple[float, float]:
    """(CPU s, wall s) from ``start()`` until the controller's picture is on screen."""
    done = []
    controller.laidOut.connect(lambda: done.append(1))
    c, w = time.process_time(), time.perf_counter()
    start()
    _wait(app, lambda: bool(done))
    return time.process_time() - c, time.perf_counter() - w


def _cpu(fn) -> tuple[float, object]:
    c = time.process_time()
    out = fn()
    return time.process_time() - c, out


def bench(app, win, path: Path) -> list[tuple[str, float, float, float, float]]:
    from editor.layout import layout_graph

    shown = []
    win.modelShown.connect(lambda tab: shown.append(tab))
    win.open_path(path)
    _wait(app, lambda: bool(shown))
    tab = shown[-1]
    canvas, controller = tab.canvas, tab.canvas.controller
    _wait(app, lambda: not controller.runner.is_running())
    _settle(app, win)
    scene = canvas.scene
    rows = []

    def gesture(what: str, start) -> None:
        """Time ``start()`` in the window, then the same layout headless (the picture
        before it as ``previous``, as the window passes it)."""
        before = scene.layout_result
        cpu, wall = _timed(app, controller, start)
        display = scene.graph
        t_same, _ = _cpu(lambda: layout_graph(display, previous=before))
        rows.append([f"{what} ({len(display.boxes):,} boxes)", cpu, wall, t_same])
        print(f"  ... {rows[-1][0]}: window {cpu:.2f} ({wall:.1f}), headless {t_same:.2f}", file=sys.stderr)
        _settle(app, win)

    def largest_group():
        groups = [it for it in scene.node_items().values() if it.box.kind == "group"]
        return max(groups, key=lambda it: it.box.child_count) if groups else None

    big = largest_group()
    if big is not None:
        gesture(f"first view: expand {big.key[2:]} ({big.box.child_count:,} nodes)",
                lambda: canvas.view.groupToggled.emit(big.key))
    gesture("Collapse All", lambda: win.registry.action("view.collapse_all").trigger())
    big = largest_group()
    if big is not None:
        gesture(f"collapsed: expand {big.key[2:]} ({big.box.child_count:,} nodes)",
                lambda: canvas.view.groupToggled.emit(big.key))
        win.registry.action("view.collapse_all").trigger()
        _wait(app, lambda: not controller.runner.is_running())
        _settle(app, win)
        scene.select_keys([big.key])
        _wait(app, win.registry.action("view.expand_selection").isEnabled, timeout=10.0)
        gesture(f"collapsed: Expand Selected {big.key[2:]} (every group inside)",
                lambda: win.registry.action("view.expand_selection").trigger())
    gesture("Expand All", lambda: win.registry.action("view.expand_all").trigger())
    # render --expanded lays out this display model, in columns
    t_flat, _ = _cpu(lambda: layout_graph(scene.graph, wrap=True))
    return [(what, cpu, wall, same, t_flat) for what, cpu, wall, same in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    args = ap.parse_args(argv)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    settings_dir = tempfile.TemporaryDirectory()
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir.name)
    from widgets.settings.store import Settings
    from widgets.settings.theme import ThemeManager
    from widgets.window.main_window import MainWindow

    models = list(args.models)
    tmp = tempfile.TemporaryDirectory()
    if not models:
        import onnx
        from fixtures.tts_standin import tts_standin

        models = [Path(tmp.name) / "tts_int8_standin.onnx"]
        onnx.save(tts_standin(), str(models[0]))
    load = os.getloadavg()[0]
    print(f"CPU seconds (wall in brackets), load average {load:.1f}; target: window <= headless + {TARGET_S:.0f} s")
    print("| model | gesture | window | headless layout (same boxes) | render --expanded layout | over |")
    print("|---|---|---:|---:|---:|---:|")
    missed = []
    for path in models:
        win = MainWindow(settings=Settings(), theme=ThemeManager(app, "light"))
        win.interactive_errors = False
        win.resize(1600, 1000)
        win.show()
        for what, cpu, wall, same, flat in bench(app, win, path):
            over = cpu - same
            print(f"| {path.name} | {what} | {cpu:.2f} ({wall:.1f}) | {same:.2f} | {flat:.2f} | {over:+.2f} |")
            if over > TARGET_S:
                missed.append(f"{path.name}: {what} took {over:.2f} s more than the headless layout")
        for t in win.tab_list():
            t.doc.stack.set_clean()
        win.close()
        win.deleteLater()
        app.processEvents()
    tmp.cleanup()
    if missed:
        print("MISSED: " + "; ".join(missed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
