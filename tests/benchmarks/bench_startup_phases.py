#!/usr/bin/env python3
"""Where the start-up of ``onnx-studio MODEL --screenshot`` goes, phase by phase, in CPU.

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_startup_phases.py \\
        [MODEL.onnx] [--repeat 3] [--baseline DIR]

Each run is a fresh process that opens MODEL (default: the 11,812-node export of
``make_large_models.py``) as ``--screenshot`` does, with the window's phases timed: the
process's CPU when ``MainWindow()`` starts (interpreter, onnx, Qt and the window's modules)
and ends, the loader thread's CPU (``Document.open`` and what the loader does after it),
the GUI thread's CPU in ``_on_loaded`` (the view model, the canvas), and the process's CPU
and age when the canvas first paints the model. CPU, not wall-clock: the shared machine's
load stretches wall time, not the work. ``--baseline DIR`` runs another checkout (``git
worktree add --detach DIR COMMIT``, or ``git archive COMMIT | tar -x -C DIR``) with the same
interpreter, interleaved, so both see the same load. Medians of ``--repeat`` runs.
Each run is followed by an ``onnx.load`` of the same model in a fresh process (wall and
CPU, the import of onnx not counted), the reference the start-up is held against. After the
first paint, a 5 ms heartbeat runs until the window has shown the model (``modelShown``:
the late docks installed, the panels filled): its longest gap is the longest the window
could not answer a click then.

NOTE: both trees' modules are compiled to bytecode first (``__pycache__``, git-ignored), as
an installed application's are. A checkout run from a shell that sets
``PYTHONDONTWRITEBYTECODE`` with stale bytecode compiles every module it imports from
source at every start: 0.36-0.44 s more CPU before the first paint of this model (measured
2026-11-27 on two copies of one commit). ``--as-is`` measures the trees as they are.
Not collected by pytest (tests/benchmarks is ignored by the default run).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = Path("/tmp/onnx-large/llama_200x128/model.onnx")

#: (module, qualified name) timed in the child; missing ones (another checkout) are skipped
TIMED = [
    ("widgets.window.main_window", "MainWindow.__init__"),
    ("widgets.window.main_window", "MainWindow._on_loaded"),
    ("editor.document", "Document.open"),
    ("widgets.window.loader", "_first_validation"),
]

CHILD = r"""
import functools, importlib, json, os, sys, threading, time
from pathlib import Path

def age():
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")

events = []
def note(what):
    events.append((what, age(), time.process_time(), time.thread_time(), threading.current_thread() is threading.main_thread()))

def wrap(module, qual):
    try:
        owner = importlib.import_module(module)
        *path, name = qual.split(".")
        for p in path:
            owner = getattr(owner, p)
        raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    except (ImportError, AttributeError, KeyError):
        return
    kind = type(raw) if isinstance(raw, (classmethod, staticmethod)) else None
    fn = raw.__func__ if kind else raw

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        note(">" + qual)
        try:
            return fn(*args, **kwargs)
        finally:
            note("<" + qual)
    setattr(owner, name, kind(timed) if kind else timed)

import widgets.window.app as app

create_window = app.create_window
def create_window_timed(*args, **kwargs):
    for module, qual in json.loads(sys.argv[2]):
        wrap(module, qual)  # the window's modules imported here count as imports, as they would
    return create_window(*args, **kwargs)
app.create_window = create_window_timed

# after the first paint: the longest gap of a 5 ms heartbeat until the window has shown the
# model (late docks installed, panels filled: modelShown), the longest the window could not
# answer a click
gaps = {"longest": 0.0}
def heartbeat():
    from PySide6.QtCore import QTimer
    beat = QTimer()
    beat.setInterval(5)
    last = gaps["last"] = [time.perf_counter()]
    def on_beat():
        now = time.perf_counter()
        gaps["longest"] = max(gaps["longest"], now - last[0])
        last[0] = now
    beat.timeout.connect(on_beat)
    beat.start()
    gaps["timer"] = beat

watch = app.watch_first_paint
def watch_timed(viewport, result, when=None):
    class Seen(dict):
        def setdefault(self, key, value):
            if key == "painted" and key not in result:
                note("painted")
                heartbeat()
            return result.setdefault(key, value)
    return watch(viewport, Seen(), when)
app.watch_first_paint = watch_timed

import widgets.window.main_window as main_window
init = main_window.MainWindow.__init__
def init_timed(self, *args, **kwargs):
    init(self, *args, **kwargs)
    def shown(_tab):
        if "timer" in gaps and "shown" not in gaps:
            # (the stretch since the last beat counts too: all of it, when none came)
            gaps["shown"] = max(gaps["longest"], time.perf_counter() - gaps["last"][0])
            gaps["timer"].stop()
            note("shown")
    self.modelShown.connect(shown)
main_window.MainWindow.__init__ = init_timed

code = app.main([sys.argv[1], "--screenshot", sys.argv[3]])
print("PHASES " + json.dumps({"code": code, "events": events, "after": gaps.get("shown")}))
"""


def run_once(tree: Path, model: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="startup-phases-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
        proc = subprocess.run([sys.executable, "-c", CHILD, str(model), json.dumps(TIMED), str(Path(tmp) / "x.png")],
                              cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PHASES ")), None)
    if line is None:
        raise SystemExit(f"{tree}: no result (exit {proc.returncode}): {proc.stderr[-2000:]}")
    got = json.loads(line[len("PHASES "):])
    out = phases(got["events"])
    if got.get("after") is not None:
        out["after the paint: longest GUI gap until the model is shown (wall)"] = got["after"]
    return out


ONNX_LOAD = r"""
import json, sys, time
import onnx
wall, cpu = time.perf_counter(), time.process_time()
onnx.load(sys.argv[1])
print("LOAD " + json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""


def onnx_load_once(model: Path) -> dict:
    """Wall and CPU seconds of ``onnx.load(model)`` in a fresh process (after its imports)."""
    proc = subprocess.run([sys.executable, "-c", ONNX_LOAD, str(model)], capture_output=True, text=True,
                          timeout=600)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("LOAD ")), None)
    if line is None:
        raise SystemExit(f"onnx.load: no result (exit {proc.returncode}): {proc.stderr[-2000:]}")
    wall, cpu = json.loads(line[len("LOAD "):])
    return {"onnx.load beside it, wall": wall, "onnx.load beside it, CPU": cpu}


def compile_tree(tree: Path) -> None:
    """Bytecode for the tree's packages, as an installed application has it (see NOTE above)."""
    for package in ("editor", "widgets", "resources"):
        if (tree / package).is_dir():
            compileall.compile_dir(str(tree / package), quiet=1)


def phases(events: list) -> dict:
    """Seconds of CPU per phase from the child's events (what, age, process CPU, thread CPU,
    on the main thread)."""
    first = {}
    last = {}
    for what, age, proc, thread, main in events:
        first.setdefault(what, (age, proc, thread, main))
        last[what] = (age, proc, thread, main)
    out = {}
    if ">MainWindow.__init__" in first:
        out["imports, interpreter, Qt (process CPU before MainWindow())"] = first[">MainWindow.__init__"][1]
        out["MainWindow()"] = last["<MainWindow.__init__"][1] - first[">MainWindow.__init__"][1]
    if ">Document.open" in first:
        end = last.get("<_first_validation", last["<Document.open"])
        out["loader thread: Document.open"] = last["<Document.open"][2] - first[">Document.open"][2]
        out["loader thread: after Document.open (first validation)"] = end[2] - last["<Document.open"][2]
    if ">MainWindow._on_loaded" in first:
        out["GUI thread: _on_loaded (view model, canvas)"] = (last["<MainWindow._on_loaded"][2]
                                                              - first[">MainWindow._on_loaded"][2])
    if "painted" in first:
        out["process CPU at the first paint"] = first["painted"][1]
        out["painted, s after start (wall)"] = first["painted"][0]
    if "shown" in first:
        out["model shown (late docks installed, panels filled), s after start (wall)"] = first["shown"][0]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout, run interleaved with this one")
    ap.add_argument("--as-is", action="store_true", help="do not compile the trees' bytecode first")
    a = ap.parse_args(argv)
    if not a.model.is_file():
        print(f"no model at {a.model} (make it with ../shared/corpus/make_large_models.py)", file=sys.stderr)
        return 2
    trees = {"this": ROOT} | ({"baseline": a.baseline.resolve()} if a.baseline else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    if not a.as_is:
        for tree in trees.values():
            compile_tree(tree)
    load = [os.getloadavg()[0]]
    for _ in range(a.repeat):
        for name, tree in trees.items():
            runs[name].append(run_once(tree, a.model) | onnx_load_once(a.model))
    load.append(os.getloadavg()[0])
    keys = list(dict.fromkeys(k for rs in runs.values() for r in rs for k in r))
    print(f"{a.model.name}: medians of {a.repeat} runs, load average {load[0]:.1f} -> {load[1]:.1f}")
    print("| phase | " + " | ".join(trees) + " |")
    print("|---|" + "---:|" * len(trees))
    for k in keys:
        cells = []
        for name in trees:
            values = [r[k] for r in runs[name] if k in r]
            cells.append(f"{statistics.median(values):.2f}" if values else "")
        print(f"| {k} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
