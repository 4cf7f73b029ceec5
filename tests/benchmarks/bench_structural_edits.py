#!/usr/bin/env python3
"""How long the window stops answering after a structural edit (not a rename) of a model.

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_structural_edits.py [MODEL.onnx] [--picks 5]

The window with its default docks opens MODEL (default: the 11,812-node export of
``../shared/corpus/make_large_models.py``) and settles. Then, at ``--picks`` nodes spread over
the main graph, it deletes the node, undoes that, changes the node's op type, and undoes
that, one edit a second. For each kind it reports the median of the command's own time
(``doc.execute`` / ``doc.undo``) and of the longest gap of a 5 ms heartbeat in the second
after it: the view rebuilt, re-laid out and repainted, the panels and checks following.
``tests/benchmarks/bench_window_edits.py`` measures renames, which relabel a box in place;
these edits rebuild the view. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DEFAULT_MODEL = Path("/tmp/onnx-large/llama_200x128/model.onnx")
KINDS = ("delete", "undo the delete", "change op type", "undo the change")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--picks", type=int, default=5)
    args = parser.parse_args()
    if not args.model.is_file():
        raise SystemExit(f"no model at {args.model} (../shared/corpus/make_large_models.py makes the export)")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from editor.commands.nodes import DeleteNodes, SetNodeField
    from tests.benchmarks.bench_soak import drive, make_window, open_tab
    from tests.benchmarks.bench_window_edits import BusyMeter, settle

    app, win = make_window()
    meter = BusyMeter()
    got: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}

    def script():  # noqa: ANN202
        tab = yield from open_tab(win, args.model)
        yield from settle(win, tab, meter, at_least=1.0)
        doc = tab.doc
        ids = list(doc.main.node_ids)
        picks = [ids[len(ids) * k // (args.picks + 2)] for k in range(1, args.picks + 1)]
        edits = {"delete": lambda nid: doc.execute(DeleteNodes([nid])),
                 "undo the delete": lambda _nid: doc.undo(),
                 "change op type": lambda nid: doc.execute(SetNodeField(nid, "op_type", doc.node(nid).op_type + "X")),
                 "undo the change": lambda _nid: doc.undo()}
        for kind in KINDS:
            for nid in picks:
                meter.start_beat()
                start = time.perf_counter()
                edits[kind](nid)
                took = time.perf_counter() - start
                yield 1.0
                meter.stop_beat()
                got[kind].append((took, meter.max_gap))
        doc.stack.set_clean()

    drive(app, script())
    print(f"{args.model.name}: {len(win.current_tab().doc.main.node_ids):,} nodes; "
          f"load average {os.getloadavg()[0]:.2f}; {args.picks} nodes per kind")
    print("| edit | command ms (median) | longest gap after it, ms (median) | max |")
    print("|---|---:|---:|---:|")
    for kind, runs in got.items():
        print(f"| {kind} | {statistics.median(t for t, _ in runs) * 1000:.1f} "
              f"| {statistics.median(g for _, g in runs) * 1000:.0f} | {max(g for _, g in runs) * 1000:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
