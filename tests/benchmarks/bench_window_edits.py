"""What one edit costs in the real window, end to end, over models of many sizes and kinds.

Run:  QT_QPA_PLATFORM=offscreen PYTHONPATH=. python tests/benchmarks/bench_window_edits.py \
          [MODEL.onnx ...] [--extra /tmp/onnx-corpus-extra] [--large /tmp/corpus_large] \
          [--edits 30] [--undo-all 2000] [--all-docks] [--profile OUT.prof]

Each model opens in the real window (default docks; ``--all-docks`` also shows Summary,
Cost, History and every tabbed panel in front), settles, then gets ``--edits`` node renames
driven from the window's own event loop (a generator stepped by timers, as clicks come).
For each rename it measures, on the GUI thread:

* ``execute``: ``doc.execute`` (every synchronous listener);
* ``end to end``: execute plus every busy stretch of the event loop until the window is
  quiet again (the coalesced views, the canvas, the panels, results of background work
  arriving): the time the edit kept the GUI thread from anything else. Busy stretches are
  the time between the dispatcher's ``awake`` and ``aboutToBlock``;
* ``frame``: one repaint of the whole window (the least any visible change costs), and
  ``ratio``: end to end over (bare-document edit + frame);
* ``stall``: the longest gap of a 5 ms heartbeat timer over a sequence of renames 30 ms
  apart (the issue's "no GUI-thread stall over 50 ms"), in wall-clock time and in the GUI
  thread's CPU time within one gap (on a loaded machine the wall-clock gap also holds the
  time other processes kept the thread off a core).

``--undo-all N`` then makes N renames and undoes all of them through the History panel
(slices with progress, as a click on its first row does), then redoes them.

Models (those found): the shared corpus's real models and light CNNs, the extra models of
``fetch_more.sh`` (``--extra``; also ``ddddocr_common.onnx`` if put there), the big exports
of ``make_large_models.py`` (``--large``: ``llama_200x128``, and issue-30b's fixtures under ``30b/`` when there). The reference per model is the
same rename on a bare Document (no window, no validator) in the same process: the ratio
says what the window adds to the edit, whatever the machine's load.

``measure_model`` is what the default suite's short test (tests/widgets/test_edit_cost.py)
calls with a few small models.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.benchmarks.bench_soak import drive, make_window, open_tab  # noqa: E402

#: the window counts as quiet after this long without a 50 ms poll interval in which the GUI
#: thread used more than QUIET_BUSY_S of CPU
QUIET_S = 0.45
QUIET_BUSY_S = 0.0015
#: renames in the heartbeat sequence
STALL_EDITS = 100
CORPUS = Path(os.environ.get("ONNX_STUDIO_CORPUS", ROOT.parent / "shared" / "corpus"))


@dataclass
class EditCost:
    model: str
    nodes: int
    megabytes: float
    execute: list[float] = field(default_factory=list)
    end_to_end: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    stall: float = 0.0
    busy_stall: float = 0.0
    #: CPU of one repaint of the whole window (docks, canvas): the price of any frame
    frame: list[float] = field(default_factory=list)
    open_s: float = 0.0
    undo_all_s: float | None = None
    redo_all_s: float | None = None
    #: GUI-thread CPU of the undo-all / redo-all (the wall-clock time on a loaded machine
    #: also holds the time other processes kept the thread off a core)
    undo_all_cpu: float | None = None
    redo_all_cpu: float | None = None
    undo_steps: int = 0

    @staticmethod
    def _ms(values: list[float]) -> float:
        return statistics.median(values) * 1000 if values else float("nan")

    @property
    def median_ms(self) -> float:
        return self._ms(self.end_to_end)

    @property
    def ratio(self) -> float:
        """Median window edit over what it cannot cost less than: the bare-document edit
        plus one frame (a repaint of the window), both measured in the same process."""
        floor = statistics.median(self.bare) + statistics.median(self.frame)
        return statistics.median(self.end_to_end) / max(floor, 1e-6)

    def row(self) -> str:
        undo = "" if self.undo_all_s is None else \
            f" {self.undo_steps} undos {self.undo_all_s:.2f} s ({self.undo_all_cpu:.2f} s CPU), " \
            f"redos {self.redo_all_s:.2f} s ({self.redo_all_cpu:.2f} s CPU)"
        return (f"| {self.model} | {self.nodes:,} | {self.megabytes:.1f} | {self._ms(self.execute):.1f} | "
                f"{self.median_ms:.1f} | {max(self.end_to_end) * 1000:.1f} | {self.stall * 1000:.0f} / "
                f"{self.busy_stall * 1000:.0f} | "
                f"{self._ms(self.bare):.2f} | {self._ms(self.frame):.1f} | {self.ratio:.1f} |{undo}")


class BusyMeter:
    """CPU time of the GUI thread (the edit and all the event-loop work it queues, however
    the machine is loaded) and the longest gap of a 5 ms heartbeat timer.

    NOTE: CPU time and not the dispatcher's awake/aboutToBlock signals: with Qt's glib and
    unix dispatchers, timers fire after ``aboutToBlock`` and before the next ``awake``, so
    the stretches between those signals are not the work."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.beat = QTimer()
        self.beat.setInterval(5)
        self.beat.timeout.connect(self._on_beat)
        self.last_beat = time.perf_counter()
        self.last_beat_cpu = time.thread_time()
        self.max_gap = 0.0
        #: every gap between two beats since start_beat (seconds)
        self.gaps: list[float] = []
        #: the most GUI-thread CPU between two beats: the stall that is our own work, not the
        #: machine's other load keeping the thread off a core
        self.max_busy_gap = 0.0
        #: (wall, GUI-thread CPU) at each settle poll
        self.samples: list[tuple[float, float]] = []

    def _on_beat(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.max_gap = max(self.max_gap, now - self.last_beat)
        self.gaps.append(now - self.last_beat)
        self.max_busy_gap = max(self.max_busy_gap, cpu - self.last_beat_cpu)
        self.last_beat, self.last_beat_cpu = now, cpu

    def start_beat(self) -> None:
        self.last_beat, self.last_beat_cpu = time.perf_counter(), time.thread_time()
        self.max_gap = self.max_busy_gap = 0.0
        self.gaps = []
        self.beat.start()

    def stop_beat(self) -> None:
        self.beat.stop()
        # (the stretch since the last beat counts too: all of it, when none came)
        self.gaps.append(time.perf_counter() - self.last_beat)
        self.max_gap = max(self.max_gap, self.gaps[-1])

    @staticmethod
    def cpu() -> float:
        return time.thread_time()

    def sample(self) -> tuple[float, float]:
        s = (time.perf_counter(), self.cpu())
        self.samples.append(s)
        return s

    def last_busy(self) -> tuple[float, float]:
        """(wall, CPU) at the end of the last poll interval in which the GUI thread did more
        than a poll's worth of work (the first sample when none did)."""
        for k in range(len(self.samples) - 1, 0, -1):
            if self.samples[k][1] - self.samples[k - 1][1] > QUIET_BUSY_S:
                return self.samples[k]
        return self.samples[0]

    def close(self) -> None:
        self.beat.stop()


def settle(win, tab, meter: BusyMeter, *, at_least: float = QUIET_S, timeout: float = 60.0) -> Generator:
    """Come back once the window has been quiet for ``at_least`` seconds.

    NOTE: polled every 50 ms, not from a fast timer: each poll is a busy stretch of its own
    that would be counted as the edit's."""
    from widgets.window.heap_freeze import opening_settled

    start = time.perf_counter()
    meter.samples.clear()
    meter.sample()
    while True:
        yield 0.05
        now, _cpu = meter.sample()
        if now - start > timeout:
            return
        if opening_settled(win, tab) and now - meter.last_busy()[0] >= at_least:
            return


def show_all_docks(win) -> None:
    for dock in list(win.docks) + [win.editing.history_dock]:
        dock.show()
        dock.raise_()


def renames(doc, count: int) -> list:
    """``count`` (node id, rename command) spread over the main graph (each a new undo step)."""
    from editor.commands import SetNodeField

    ids = list(doc.scope(doc.index.main).node_ids)
    out = []
    for i in range(count):
        nid = ids[(i * 7919 + len(ids) // 3) % len(ids)]
        out.append((nid, SetNodeField(nid, "name", f"{doc.node(nid).name or 'node'}_e{i}")))
    return out


def select(tab, nid: int) -> None:
    """Select a node as a click in the outline does (the canvas shows it)."""
    from widgets.common.selection import Target

    tab.selection.select([Target.of_node(tab.doc.index.main, nid)], "benchmark")


def frame_costs(win, count: int = 7) -> list[float]:
    """GUI-thread CPU of repainting the whole window, ``count`` times."""
    out = []
    for _ in range(count):
        c = time.thread_time()
        win.repaint()
        out.append(time.thread_time() - c)
    return out


def bare_costs(path: Path, count: int) -> list[float]:
    """The same renames on a bare Document (no window, no validator)."""
    from editor.document import Document

    doc = Document.open(path)
    out = []
    for _nid, cmd in renames(doc, count):
        doc.stack.break_merge()
        t = time.perf_counter()
        doc.execute(cmd)
        out.append(time.perf_counter() - t)
    return out


def measure_model(win, path: Path, *, edits: int, undo_all: int = 0, all_docks: bool = False,
                  stall_edits: int = STALL_EDITS, quiet: float = QUIET_S, profile=None) -> Generator:
    """Open ``path`` in ``win`` and measure ``edits`` renames (see the module docstring);
    ``quiet``: how long the window must be idle to count as done (longer than any timer an
    edit starts)."""
    meter = BusyMeter()
    try:
        if all_docks:
            show_all_docks(win)
        t = time.perf_counter()
        tab = yield from open_tab(win, path)
        open_s = time.perf_counter() - t
        yield from settle(win, tab, meter, at_least=max(quiet, 1.0), timeout=300)
        doc = tab.doc
        result = EditCost(path.stem, len(doc.main.node_ids), path.stat().st_size / 1e6, open_s=open_s)
        result.bare = bare_costs(path, edits)
        result.frame = frame_costs(win)
        for nid, cmd in renames(doc, edits):
            # the user renames the node they selected (the canvas went to it, not timed)
            select(tab, nid)
            yield from settle(win, tab, meter, at_least=quiet)
            doc.stack.break_merge()
            if profile is not None:
                profile.enable()
            c0, t0 = meter.cpu(), time.perf_counter()
            doc.execute(cmd)
            t1 = time.perf_counter()
            yield from settle(win, tab, meter, at_least=quiet)
            if profile is not None:
                profile.disable()
            # the quiet tail (polls only) is left out: CPU up to the last busy poll interval
            result.execute.append(t1 - t0)
            result.end_to_end.append(meter.last_busy()[1] - c0)
        if stall_edits:
            result.stall, result.busy_stall = yield from longest_stall(win, tab, meter, stall_edits)
        if undo_all:
            yield from undo_redo_all(win, tab, meter, result, undo_all)
        tab.doc.stack.set_clean()
        win.close_tab(win.tabs.indexOf(tab))
        yield 0.2
        return result
    finally:
        meter.close()


def longest_stall(win, tab, meter: BusyMeter, count: int) -> Generator:
    """The longest gap of a 5 ms heartbeat over ``count`` renames 30 ms apart (a script, or
    a fast user) and the work they leave behind; the renamed nodes lie all over the graph,
    so the view goes to each (as after an undo)."""
    doc = tab.doc
    meter.start_beat()
    for _nid, cmd in renames(doc, count):
        doc.stack.break_merge()
        doc.execute(cmd)
        yield 0.03
    yield from settle(win, tab, meter)
    meter.stop_beat()
    return meter.max_gap, meter.max_busy_gap


def undo_redo_all(win, tab, meter: BusyMeter, result: EditCost, steps: int) -> Generator:
    doc = tab.doc
    for _nid, cmd in renames(doc, steps):
        doc.stack.break_merge()
        doc.execute(cmd)
    yield from settle(win, tab, meter, timeout=300)
    history = win.editing.history
    history.set_document(doc)
    done: list = []
    history.jumpFinished.connect(done.append)
    target = doc.stack.index
    t, c = time.perf_counter(), meter.cpu()
    history.go_to(0)
    yield lambda: bool(done)
    yield from settle(win, tab, meter, timeout=300)
    result.undo_all_s = time.perf_counter() - t
    result.undo_all_cpu = meter.last_busy()[1] - c
    done.clear()
    t, c = time.perf_counter(), meter.cpu()
    history.go_to(target)
    yield lambda: bool(done)
    yield from settle(win, tab, meter, timeout=300)
    result.redo_all_s = time.perf_counter() - t
    result.redo_all_cpu = meter.last_busy()[1] - c
    history.jumpFinished.disconnect(done.append)
    result.undo_steps = target


def corpus_models(extra: Path | None, large: Path | None) -> list[Path]:
    """The models found, smallest graphs first."""
    names = [CORPUS / "real" / n for n in ("fw_silero_vad_v6.onnx", "magika_standard_v3_3.onnx",
                                            "silero_vad_16k_op15.onnx", "ppocr_mobile_v2_cls.onnx",
                                            "ppocrv4_det.onnx")]
    names += [CORPUS / "onnx-backend" / "light" / n for n in ("light_resnet50.onnx", "light_densenet121.onnx")]
    if extra is not None:
        names += [extra / n for n in ("ddddocr_common.onnx", "ddddocr_common_old_int8.onnx", "ddddocr_det_yolox.onnx",
                                      "minilm_l6_v2_int8w.onnx", "ppocrv4_rec.onnx")]
    if large is not None:
        names += [large / "30b" / "reused_module.onnx", large / "30b" / "tts_like_int8.onnx",
                  large / "llama_200x128" / "model.onnx"]
    return [p for p in names if p.is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--extra", type=Path, default=Path("/tmp/onnx-corpus-extra"))
    ap.add_argument("--large", type=Path, default=Path("/tmp/onnx-large"))
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--undo-all", type=int, default=0)
    ap.add_argument("--all-docks", action="store_true")
    ap.add_argument("--profile", type=Path, help="cProfile the edits of every model into this file")
    a = ap.parse_args(argv)
    models = a.models or corpus_models(a.extra if a.extra.is_dir() else None, a.large if a.large.is_dir() else None)
    profile = None
    if a.profile:
        import cProfile

        profile = cProfile.Profile(time.thread_time)  # GUI-thread CPU: the machine may be loaded
    app, win = make_window()
    import tempfile

    from editor.recovery import RecoveryStore

    # as the app runs: recovery copies written a couple of seconds after the edits
    win.editing.enable_recovery(RecoveryStore(Path(tempfile.mkdtemp(prefix="onnx-studio-bench-")) / "recovery"),
                                offer=False)
    results: list[EditCost] = []

    def script() -> Generator:
        for path in models:
            r = yield from measure_model(win, path, edits=a.edits, undo_all=a.undo_all, all_docks=a.all_docks,
                                         profile=profile)
            results.append(r)
            print(r.row(), flush=True)

    print(f"load average {os.getloadavg()[0]:.2f}; {a.edits} renames per model; docks: "
          f"{'all shown' if a.all_docks else 'default'}")
    print("| model | nodes | MB | execute ms | end to end ms (median) | max | stall ms (wall / CPU) | bare ms | frame ms | ratio | undo-all |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    drive(app, script())
    print(f"load average {os.getloadavg()[0]:.2f}")
    if profile is not None:
        profile.dump_stats(str(a.profile))
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
