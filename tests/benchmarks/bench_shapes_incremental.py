"""The shape engine on a large model: a whole pass, and the incremental update after edits.

Run:  PYTHONPATH=. python tests/benchmarks/bench_shapes_incremental.py [--model PATH] [--layers 440] [--reps 5]

Without ``--model`` it builds the torch-export-like transformer of ``bench_cost`` with 440
layers (11,880 nodes: the size of the 11,812-node llama export of
``shared/corpus/make_large_models.py``, which needs torch to make). Prints, as medians of
CPU time: the whole-model pass (:func:`editor.shapes.infer_model`), and
:meth:`editor.shapes.incremental.LiveShapes.update` after edits made through the document's
commands in the middle of the graph: a rename (no shape changes: the wave stops at once),
an input rewired to a value of the same shape, and one of another shape (every node
downstream re-inferred). Targets: whole pass <= 1 s; an edit's update <= 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from bench_cost import make_transformer

    from editor.commands import SetNodeField, SetNodeInput
    from editor.document import Document
    from editor.shapes import infer_model
    from editor.shapes.incremental import LiveShapes

    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path)
    ap.add_argument("--layers", type=int, default=440)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--at", type=int, default=2, help="edit at 1/AT of the graph (default 2: the middle)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.model
        if path is None:
            path = Path(tmp) / "transformer.onnx"
            onnx.save(make_transformer(args.layers), path)
        doc = Document.open(path)
    model = doc.model
    n = len(model.graph.node)
    whole = []
    for _ in range(args.reps):
        t = time.process_time()
        infer_model(model)
        whole.append(time.process_time() - t)
    live = LiveShapes(doc)
    stats: list = []

    def on_change(changes) -> None:
        st = live.update(changes)
        stats.append((time.process_time(), st))

    doc.changed.connect(on_change)
    scope = doc.scope(doc.index.main)
    mid = scope.node_ids[len(scope.node_ids) // 2]
    # a node in the middle with a data input that some earlier node of the same shape can feed
    # the residual Add of a layer: a shape change there flows through every later layer
    adds = [nid for nid in scope.node_ids[len(scope.node_ids) // args.at:] if doc.node(nid).op_type == "Add"]
    target = adds[0]
    src = doc.node(target).input[0]
    same = [v for v, vs in live.table.values.items() if vs == live.table.get(src) and v != src
            and v in scope.producers and scope.position(scope.producers[v]) < scope.position(target)]
    other = [v for v, vs in live.table.values.items() if vs.elem_type == live.table.get(src).elem_type
             and vs.rank == 3 and vs != live.table.get(src)
             and v in scope.producers and scope.position(scope.producers[v]) < scope.position(target)]

    def timed(cmd) -> tuple[float, object]:
        t = time.process_time()
        doc.execute(cmd)
        end, st = stats[-1]
        return end - t, st

    results: dict[str, list[float]] = {"rename": [], "rewire (same shape)": [], "rewire (other shape)": [],
                                       "undo": []}
    steps: dict[str, int] = {}
    for k in range(args.reps):
        dt, st = timed(SetNodeField(mid, "name", f"renamed_{k}"))
        results["rename"].append(dt)
        steps["rename"] = st.steps
        if same:
            dt, st = timed(SetNodeInput(target, 0, same[k % len(same)]))
            results["rewire (same shape)"].append(dt)
            steps["rewire (same shape)"] = st.steps
        if other:
            dt, st = timed(SetNodeInput(target, 0, other[k % len(other)]))
            results["rewire (other shape)"].append(dt)
            steps["rewire (other shape)"] = st.steps
        t = time.process_time()
        doc.undo()
        results["undo"].append(stats[-1][0] - t)
        steps["undo"] = stats[-1][1].steps
    print(f"{path.name}: {n} nodes")
    print(f"whole pass: {statistics.median(whole) * 1000:.0f} ms CPU (median of {args.reps})")
    for name, times in results.items():
        if times:
            print(f"{name}: edit + update {statistics.median(times) * 1000:.1f} ms CPU, "
                  f"{steps.get(name, 0)} nodes re-inferred")


if __name__ == "__main__":
    main()
