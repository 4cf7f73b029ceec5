"""Soak: a day of work in the real window, driven through its own event loop.

Run:  QT_QPA_PLATFORM=offscreen PYTHONPATH=. python tests/benchmarks/bench_soak.py \
          [--model /tmp/corpus_large/llama_200x128/model.onnx] [--edits 5000] [--block 500] \
          [--undo-all 2000] [--runs 8] [--run-model PATH] [--tabs 50]

Three phases, each printed as blocks with medians and resources, then slopes:

* **edits**: rename node / rename value / set attribute in turn on the big model (the
  History dock shown), ``--block`` edits per block; each block prints the median edit time
  (``doc.execute`` with every window listener attached) and the stack depth. An undo and a
  redo are timed at the end of each block. Then History > first row (undo all ``--undo-all``
  steps in slices with progress) and back.
* **runs**: ``--runs`` edit→run cycles of ``--run-model`` from the Run dock (each edit makes a
  new revision the worker must load): worker RSS after each run; then the tab closes and the
  worker's RSS is read until it settles.
* **tabs**: ``--tabs`` open/close cycles of real corpus models: app RSS, fds, threads, live
  documents.

Without ``--model`` a synthetic 11,812-node residual chain stands in for the llama export;
without ``--run-model`` a synthetic model with ~200 MB of weights is written to a temporary
folder. ``run_soak`` is what the default suite's short version (tests/widgets/test_soak.py)
calls with small numbers.

NOTE: the driver is a generator stepped by zero-delay timers from ``app.exec()``: every edit
returns to the event loop before the next, as clicks do, and waits are conditions polled from
the loop, never a nested ``processEvents`` loop.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

MB = 1024 * 1024


def rss(pid: int | None = None) -> int:
    from editor.runtime.memory import rss_bytes

    return rss_bytes(pid) or 0


def fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def slope(ys: list[float], xs: list[float] | None = None) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (default 0, 1, 2 ...)."""
    xs = xs if xs is not None else list(range(len(ys)))
    if len(ys) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


@dataclass
class Report:
    edit_blocks: list[dict] = field(default_factory=list)
    undo_all: dict = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    release: dict = field(default_factory=dict)
    tab_blocks: list[dict] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.lines.append(text)
        print(text, flush=True)


# -- models ------------------------------------------------------------------------------------
def chain_model(n_nodes: int, hidden: int = 16):
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from bench_validation import make_chain_model

    return make_chain_model(n_nodes, hidden)


def heavy_model(path: Path, megabytes: int = 200) -> Path:
    """A small graph with ``megabytes`` of float weights (MatMul chain), for the run phase."""
    import numpy as np
    import onnx
    from onnx import helper as h
    from onnx import numpy_helper as nh

    side = 1024
    per = side * side * 4
    count = max(1, megabytes * MB // per)
    rng = np.random.default_rng(0)
    nodes, inits, cur = [], [], "x"
    for i in range(count):
        w = (rng.standard_normal((side, side)) / side).astype(np.float32)
        inits.append(nh.from_array(w, f"w{i}"))
        nodes.append(h.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes.append(h.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"relu{i}"))
        cur = f"r{i}"
    graph = h.make_graph(nodes, "heavy", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, side])],
                         [h.make_tensor_value_info(cur, onnx.TensorProto.FLOAT, [1, side])], inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return path


# -- the driver --------------------------------------------------------------------------------
Step = Generator[object, None, None]


def drive(app, script: Step, *, timeout: float = 3600) -> None:
    """Step ``script`` from the event loop. It yields ``None`` (come back next loop pass), a
    number (seconds to wait) or a callable (come back when it returns true)."""
    from PySide6.QtCore import QTimer

    deadline = time.monotonic() + timeout
    state: dict = {"error": None}

    def step() -> None:
        try:
            while True:
                want = next(script)
                if want is None:
                    QTimer.singleShot(0, step)
                    return
                if isinstance(want, (int, float)):
                    QTimer.singleShot(int(want * 1000), step)
                    return
                if callable(want):
                    poll(want)
                    return
        except StopIteration:
            app.exit(0)
        except BaseException as exc:  # noqa: BLE001 - reported after the loop ends
            state["error"] = exc
            app.exit(0)

    def poll(cond: Callable[[], bool]) -> None:
        if cond():
            QTimer.singleShot(0, step)
        elif time.monotonic() > deadline:
            state["error"] = TimeoutError("soak step timed out")
            app.exit(0)
        else:
            QTimer.singleShot(5, lambda: poll(cond))

    QTimer.singleShot(0, step)
    app.exec()
    if state["error"] is not None:
        raise state["error"]


def make_window():
    from PySide6.QtCore import QSettings

    from widgets.window.app import create_application, create_window

    folder = tempfile.mkdtemp(prefix="onnx-studio-soak-")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
    app = create_application()
    win = create_window(theme_choice="light")
    win.interactive_errors = False
    win.resize(1400, 900)
    win.show()
    win.editing.history_dock.show()  # the panel that used to rebuild on every edit
    return app, win


def open_tab(win, path: Path) -> Step:
    shown: list = []
    win.modelShown.connect(shown.append)
    win.open_path(path)
    yield lambda: bool(shown)
    win.modelShown.disconnect(shown.append)
    win.editing.sync()
    return shown[0]


def close_tab(win, tab) -> None:
    tab.doc.stack.set_clean()
    win.close_tab(win.tabs.indexOf(tab))


# -- phases ------------------------------------------------------------------------------------
def edit_phase(win, tab, report: Report, *, edits: int, block: int, undo_all: int) -> Step:
    import onnx

    from editor.commands import RenameValue, SetAttribute, SetNodeField

    doc = tab.doc
    main = doc.index.main
    ids = list(doc.scope(main).node_ids)
    outputs = set(doc.scope(main).output_names())
    renamable = [nid for nid in ids if len(doc.node(nid).output) == 1 and doc.node(nid).output[0]
                 and doc.node(nid).output[0] not in outputs]
    with_attr = [(nid, a.name) for nid in ids for a in doc.node(nid).attribute
                 if a.type in (onnx.AttributeProto.FLOAT, onnx.AttributeProto.INT)]
    times: dict[str, list[float]] = {"rename node": [], "rename value": [], "set attribute": []}
    undo_t: list[float] = []
    redo_t: list[float] = []
    kinds = list(times)
    n = 0

    def edit(i: int):
        kind = kinds[i % len(kinds)]
        if kind == "rename node" or (kind == "set attribute" and not with_attr):
            nid = ids[(i * 7919) % len(ids)]
            return "rename node", SetNodeField(nid, "name", f"soak_node_{i}")
        if kind == "rename value":
            nid = renamable[(i * 104729) % len(renamable)]
            return kind, RenameValue(main, doc.node(nid).output[0], f"soak_v{i}")
        nid, name = with_attr[(i * 7919) % len(with_attr)]
        attr = next(a for a in doc.node(nid).attribute if a.name == name)
        value = (attr.f + 0.25) if attr.type == onnx.AttributeProto.FLOAT else (attr.i + 1)
        return kind, SetAttribute(nid, name, value)

    t_phase = time.perf_counter()
    report.say(f"edits: {len(ids):,} nodes; {edits} edits in blocks of {block} (History dock shown)")
    report.say(f"{'block':>5} {'depth':>6} {'edit ms':>8} {'node':>6} {'value':>6} {'attr':>6} {'undo':>6} "
               f"{'redo':>6} {'RSS MB':>7} {'fds':>4} {'thr':>4}")
    while n < edits:
        block_times: list[float] = []
        per_kind: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(min(block, edits - n)):
            kind, cmd = edit(n)
            doc.stack.break_merge()
            t = time.perf_counter()
            doc.execute(cmd)
            dt = time.perf_counter() - t
            block_times.append(dt)
            per_kind[kind].append(dt)
            times[kind].append(dt)
            n += 1
            yield None  # back to the event loop, as between two clicks
            if n % 100 == 0:
                yield 0.06  # coalesced views (canvas, outline) catch up now and then
        t = time.perf_counter()
        doc.undo()
        undo_t.append(time.perf_counter() - t)
        yield None
        t = time.perf_counter()
        doc.redo()
        redo_t.append(time.perf_counter() - t)
        yield None
        gc.collect()
        row = {
            "block": len(report.edit_blocks), "depth": doc.stack.index,
            "median_ms": statistics.median(block_times) * 1000,
            **{k: (statistics.median(v) * 1000 if v else float("nan")) for k, v in per_kind.items()},
            "undo_ms": undo_t[-1] * 1000, "redo_ms": redo_t[-1] * 1000,
            "rss": rss(), "fds": fds(), "threads": threading.active_count(),
        }
        report.edit_blocks.append(row)
        report.say(f"{row['block']:>5} {row['depth']:>6} {row['median_ms']:>8.2f} {row['rename node']:>6.2f} "
                   f"{row['rename value']:>6.2f} {row['set attribute']:>6.2f} {row['undo_ms']:>6.2f} "
                   f"{row['redo_ms']:>6.2f} {row['rss'] / MB:>7.0f} {row['fds']:>4} {row['threads']:>4}")
    blocks = report.edit_blocks
    if blocks:
        depth_k = [b["depth"] / 1000 for b in blocks]
        report.say(f"edit median slope: {slope([b['median_ms'] for b in blocks], depth_k):+.3f} ms per 1,000 "
                   f"stacked commands; RSS slope {slope([b['rss'] / MB for b in blocks], depth_k):+.1f} MB per 1,000")
        report.say("medians over all edits: " + ", ".join(
            f"{k} {statistics.median(v) * 1000:.2f} ms" for k, v in times.items() if v))
    report.say(f"edit phase {time.perf_counter() - t_phase:.1f} s")
    # undo all (or the last ``undo_all`` steps) through the History panel, then redo all
    if undo_all:
        history = win.editing.history
        target = max(0, doc.stack.index - undo_all)
        steps = doc.stack.index - target
        finished: list = []
        history.jumpFinished.connect(finished.append)
        t = time.perf_counter()
        history.go_to(target)
        yield lambda: bool(finished)
        undo_s = time.perf_counter() - t
        finished.clear()
        t = time.perf_counter()
        history.go_to(target + steps)
        yield lambda: bool(finished)
        redo_s = time.perf_counter() - t
        history.jumpFinished.disconnect(finished.append)
        report.undo_all = {"steps": steps, "undo_s": undo_s, "redo_s": redo_s}
        report.say(f"History: undo {steps} steps {undo_s:.2f} s, redo them {redo_s:.2f} s "
                   f"({undo_s / max(1, steps) * 1000:.2f} ms per step)")


def run_phase(win, path: Path, report: Report, *, runs: int, release_wait: float = 5.0) -> Step:
    from editor.commands import SetNodeField

    dock = win.run_dock
    tab = yield from open_tab(win, path)
    runner = dock.service.runner
    report.say(f"runs: {runs} edit->run cycles of {path.name} ({path.stat().st_size / MB:.0f} MB)")
    if runner.worker_pid is None:
        runner.start()
    idle = rss(runner.worker_pid)
    report.say(f"idle worker RSS {idle / MB:.0f} MB")
    doc = tab.doc
    nid = doc.main.node_ids[0]
    for i in range(runs):
        if i:
            doc.execute(SetNodeField(nid, "name", f"run_edit_{i}"))
        done: list = []
        dock.controller.finished.connect(done.append)
        t = time.perf_counter()
        dock.run()
        yield lambda: bool(done)
        dock.controller.finished.disconnect(done.append)
        wall = time.perf_counter() - t
        yield lambda: not dock.service.busy
        stats = runner.stats()
        row = {"run": i, "ok": done[0].ok, "wall_s": wall, "worker_rss": stats.get("rss") or 0,
               "models": stats.get("models"), "sessions": stats.get("sessions"), "app_rss": rss()}
        report.runs.append(row)
        report.say(f"run {i}: {'ok' if row['ok'] else 'FAILED ' + str(done[0].error)} {wall:.2f} s; worker "
                   f"{row['worker_rss'] / MB:.0f} MB ({row['models']} model, {row['sessions']} session); "
                   f"app {row['app_rss'] / MB:.0f} MB")
    first = report.runs[0]["worker_rss"] if report.runs else 0
    close_tab(win, tab)
    t = time.perf_counter()
    settled = None
    while time.perf_counter() - t < release_wait:
        yield 0.1
        if runner.wait_released(0):
            stats = runner.stats()
            if stats.get("models") == 0:
                settled = time.perf_counter() - t
                break
    after = rss(runner.worker_pid)
    report.release = {"idle": idle, "first": first, "last": report.runs[-1]["worker_rss"] if report.runs else 0,
                      "after_close": after, "released_s": settled}
    report.say(f"worker RSS: idle {idle / MB:.0f} MB, after run 1 {first / MB:.0f} MB, after run {runs} "
               f"{report.release['last'] / MB:.0f} MB ({report.release['last'] / max(1, first):.2f}x); tab closed: "
               f"{after / MB:.0f} MB ({(after - idle) / MB:+.0f} MB over idle), released in "
               f"{'-' if settled is None else f'{settled:.2f} s'}")


def tab_phase(win, paths: list[Path], report: Report, *, cycles: int, block: int = 10) -> Step:
    from editor.document import Document

    report.say(f"tabs: {cycles} open/close cycles over {len(paths)} real models")
    report.say(f"{'block':>5} {'cycles':>6} {'open ms':>8} {'RSS MB':>7} {'fds':>4} {'thr':>4} {'docs':>5}")
    opened: list[float] = []
    for i in range(cycles):
        t = time.perf_counter()
        tab = yield from open_tab(win, paths[i % len(paths)])
        opened.append(time.perf_counter() - t)
        close_tab(win, tab)
        yield 0.01
        if (i + 1) % block == 0:
            yield 0.2  # deleteLater and the layout pool settle
            gc.collect()
            from editor.runtime.memory import trim

            trim()
            docs = sum(1 for o in gc.get_objects() if isinstance(o, Document))
            row = {"block": len(report.tab_blocks), "cycles": i + 1, "open_ms": statistics.median(opened) * 1000,
                   "rss": rss(), "fds": fds(), "threads": threading.active_count(), "documents": docs}
            opened.clear()
            report.tab_blocks.append(row)
            report.say(f"{row['block']:>5} {row['cycles']:>6} {row['open_ms']:>8.1f} {row['rss'] / MB:>7.0f} "
                       f"{row['fds']:>4} {row['threads']:>4} {row['documents']:>5}")
    rows = report.tab_blocks
    if len(rows) >= 2:
        report.say(f"tab slopes per 100 cycles: RSS {slope([r['rss'] / MB for r in rows], [r['cycles'] / 100 for r in rows]):+.2f} MB, "
                   f"fds {slope([r['fds'] for r in rows], [r['cycles'] / 100 for r in rows]):+.2f}, "
                   f"threads {slope([r['threads'] for r in rows], [r['cycles'] / 100 for r in rows]):+.2f}")


def run_soak(*, model: Path | None = None, nodes: int = 11_812, edits: int = 5000, block: int = 500,
             undo_all: int = 2000, run_model: Path | None = None, runs: int = 8, tab_models: list[Path] | None = None,
             tabs: int = 50, tab_block: int = 10, app_and_window=None, release_wait: float = 5.0) -> Report:
    """The soak in one window; returns the figures (see module docstring). ``release_wait``:
    how long the run phase waits for the worker to release a closed tab's model."""
    import onnx

    report = Report()
    app, win = app_and_window or make_window()
    scratch = Path(tempfile.mkdtemp(prefix="onnx-studio-soak-models-"))
    if model is None and edits:
        model = scratch / f"chain_{nodes}.onnx"
        onnx.save(chain_model(nodes), str(model))
    if run_model is None and runs:
        run_model = heavy_model(scratch / "heavy.onnx")

    def script() -> Step:
        if edits:
            tab = yield from open_tab(win, model)
            yield from edit_phase(win, tab, report, edits=edits, block=block, undo_all=undo_all)
            close_tab(win, tab)
            yield 0.2
        if runs:
            yield from run_phase(win, run_model, report, runs=runs, release_wait=release_wait)
        if tabs:
            yield from tab_phase(win, tab_models or [], report, cycles=tabs, block=tab_block)

    drive(app, script())
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, help="model to edit (default: a synthetic 11,812-node chain)")
    p.add_argument("--edits", type=int, default=5000)
    p.add_argument("--block", type=int, default=500)
    p.add_argument("--undo-all", type=int, default=2000)
    p.add_argument("--run-model", type=Path, help="model for the edit->run cycles (default: ~200 MB synthetic)")
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--tabs", type=int, default=50)
    args = p.parse_args(argv)
    corpus = ROOT.parent / "shared" / "corpus"
    tab_models = [corpus / "real" / n for n in ("ppocrv4_det.onnx", "silero_vad_16k_op15.onnx",
                                                "magika_standard_v3_3.onnx")]
    tab_models += [corpus / "onnx-backend" / "light" / "light_resnet50.onnx"]
    run_soak(model=args.model, edits=args.edits, block=args.block, undo_all=args.undo_all,
             run_model=args.run_model, runs=args.runs, tab_models=[m for m in tab_models if m.is_file()],
             tabs=args.tabs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
