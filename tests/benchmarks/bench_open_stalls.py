#!/usr/bin/env python3
"""How long the window stops answering while it opens a model (File ▸ Open in a running window).

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_open_stalls.py \\
        [MODEL.onnx] [--repeat 5] [--baseline DIR]

Each run is a fresh process: the window with its default docks starts, settles, then opens
MODEL (default: the 11,812-node export of ``../shared/corpus/make_large_models.py``) while a 5 ms heartbeat
runs, until the opening has settled (the first validation, the shape table, the layouts
and the Cost panel done, then a second with nothing to do). Reported, medians over the runs:
the longest gap of the heartbeat (the longest the window could not answer a click), the
second and third longest, and when the model was shown and when the opening settled.
``--baseline DIR`` runs another checkout (``git worktree add --detach DIR COMMIT``) with the
same interpreter, interleaved with this one, so both see the same load.
Not collected by pytest (tests/benchmarks is ignored by the default run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = Path("/tmp/onnx-large/llama_200x128/model.onnx")

CHILD = r"""
import json, sys, time
from pathlib import Path
from tests.benchmarks.bench_soak import drive, make_window, open_tab
from tests.benchmarks.bench_window_edits import BusyMeter, settle

app, win = make_window()
meter, marks = BusyMeter(), {}

def script():
    yield 1.0  # the window's own start-up is not measured
    marks["open"] = time.perf_counter()
    meter.start_beat()
    win.modelShown.connect(lambda _tab: marks.setdefault("shown", time.perf_counter()))
    tab = yield from open_tab(win, Path(sys.argv[1]))
    yield from settle(win, tab, meter, at_least=1.0)
    meter.stop_beat()
    marks["settled"] = time.perf_counter() - 1.0
    tab.doc.stack.set_clean()

drive(app, script())
top = sorted(meter.gaps, reverse=True)[:3]
print("STALLS " + json.dumps({"gaps_ms": [round(g * 1000, 1) for g in top],
                              "shown_s": marks["shown"] - marks["open"],
                              "settled_s": marks["settled"] - marks["open"]}))
"""


def run_once(tree: Path, model: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (bytecode as an installed application has it)
    done = subprocess.run([sys.executable, "-c", CHILD, str(model)], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("STALLS ")), None)
    if line is None:
        raise SystemExit(f"the run in {tree} printed no result:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return json.loads(line[len("STALLS "):])


def summary(runs: list[dict]) -> dict:
    return {"longest gap, ms": statistics.median(r["gaps_ms"][0] for r in runs),
            "2nd, ms": statistics.median(r["gaps_ms"][1] for r in runs),
            "3rd, ms": statistics.median(r["gaps_ms"][2] for r in runs),
            "each run's longest, ms": [r["gaps_ms"][0] for r in runs],
            "shown, s": round(statistics.median(r["shown_s"] for r in runs), 2),
            "settled, s": round(statistics.median(r["settled_s"] for r in runs), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout, run interleaved")
    args = parser.parse_args()
    if not args.model.is_file():
        raise SystemExit(f"no model at {args.model} (../shared/corpus/make_large_models.py makes the export)")
    trees = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(args.repeat):
        for name, tree in trees.items():
            runs[name].append(run_once(tree, args.model))
    print("load average (1, 5, 15 min):", ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    for name, got in runs.items():
        print(name, json.dumps(summary(got)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
