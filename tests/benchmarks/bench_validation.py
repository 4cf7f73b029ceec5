"""Edit + incremental validation latency on a 10,000-node model (not in the default run).

Run:  PYTHONPATH=. python tests/benchmarks/bench_validation.py [--nodes 10000] [--model PATH] [--reps 15]
  or: python -m pytest tests/benchmarks/bench_validation.py -s

It generates a realistic chain with onnx.helper (MatMul + bias Add + LeakyRelu + MatMul +
residual Add + Mul per block, every intermediate value typed in value_info, ~5,000
initializers), or uses ``--model`` (e.g. /tmp/onnx-large/llama_200x128/model.onnx). It
reports, for each kind of edit and for its undo, the median time of ``doc.execute`` /
``doc.undo`` with a live Validator attached, against the same edit with no validator in the
same process (the ratio is what carries across machines), plus ``validate_all`` time
against ``onnx.checker.check_model`` on the same model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from editor.commands import (
    AddNode,
    DeleteNodes,
    RenameValue,
    SetAttribute,
    SetDimension,
    SetNodeField,
    SetNodeInput,
    SetValueType,
)
from editor.document import Document
from editor.validation import Validator


def make_chain_model(n_nodes: int = 10_000, hidden: int = 16, seed: int = 0) -> onnx.ModelProto:
    """A residual MLP chain of ``n_nodes`` nodes, every intermediate value in value_info."""
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    infos: list[onnx.ValueInfoProto] = []
    cur = "x"
    b = 0
    while len(nodes) < n_nodes:
        p = f"b{b}_"
        inits += [
            nh.from_array(rng.standard_normal((hidden, hidden)).astype(np.float32), p + "w1"),
            nh.from_array(rng.standard_normal((hidden, hidden)).astype(np.float32), p + "w2"),
            nh.from_array(rng.standard_normal((hidden,)).astype(np.float32), p + "bias"),
        ]
        nodes += [
            h.make_node("MatMul", [cur, p + "w1"], [p + "mm1"], name=p + "mm1"),
            h.make_node("Add", [p + "mm1", p + "bias"], [p + "add1"], name=p + "add1"),
            h.make_node("LeakyRelu", [p + "add1"], [p + "act"], name=p + "act", alpha=0.1),
            h.make_node("MatMul", [p + "act", p + "w2"], [p + "mm2"], name=p + "mm2"),
            h.make_node("Add", [p + "mm2", cur], [p + "res"], name=p + "res"),
            h.make_node("Mul", [p + "res", p + "bias"], [p + "out"], name=p + "out"),
        ]
        for n in ("mm1", "add1", "act", "mm2", "res", "out"):
            infos.append(h.make_tensor_value_info(p + n, T.FLOAT, ["batch", hidden]))
        cur = p + "out"
        b += 1
    nodes = nodes[:n_nodes]
    last = nodes[-1].output[0]
    produced = {o for n in nodes for o in n.output}
    infos = [vi for vi in infos if vi.name != last and vi.name in produced]
    graph = h.make_graph(
        nodes,
        "chain",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", hidden])],
        [h.make_tensor_value_info(last, T.FLOAT, ["batch", hidden])],
        inits,
        value_info=infos,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="bench")


def _edits(doc: Document) -> dict[str, Callable[[int], object]]:
    """Edit factories; ``k`` varies the target so repeated runs do not hit the same node.

    Targets are found by shape, not by name, so any model works (the generated chain, a
    torch export ...): nodes from the middle of the main graph onwards.
    """
    main = doc.index.main
    ids = doc.scope(main).node_ids
    mid = len(ids) // 2
    outputs = set(doc.scope(main).output_names())

    def node(k: int, want: Callable[[onnx.NodeProto], bool]) -> int:
        found = 0
        for nid in ids[mid:]:
            if want(doc.node(nid)):
                if found == k:
                    return nid
                found += 1
        raise LookupError("no node fits this edit")

    def float_attr(n: onnx.NodeProto) -> bool:
        return any(a.type == onnx.AttributeProto.FLOAT for a in n.attribute)

    def two_inputs(n: onnx.NodeProto) -> bool:
        return len(n.input) >= 2 and all(n.input[:2])

    def pass_through(n: onnx.NodeProto) -> bool:
        return len(n.output) == 1 and bool(n.input) and bool(n.input[0]) and n.output[0] not in outputs

    def value(k: int) -> str:
        return doc.node(node(k, pass_through)).output[0]

    def set_float(k: int) -> SetAttribute:
        nid = node(k, float_attr)
        a = next(a for a in doc.node(nid).attribute if a.type == onnx.AttributeProto.FLOAT)
        return SetAttribute(nid, a.name, a.f + 0.5)

    first_input = doc.scope(main).input_names()[0]
    return {
        "rename node": lambda k: SetNodeField(ids[mid + k], "name", f"renamed_{k}"),
        "set attribute": set_float,
        "rewire input": lambda k: SetNodeInput(node(k, two_inputs), 1, first_input),
        "add node": lambda k: AddNode(main, "Relu", name=f"extra_{k}", inputs=[value(k)], outputs=[f"extra_out_{k}"]),
        "delete node (reconnect)": lambda k: DeleteNodes([node(k, pass_through)], reconnect=True),
        "set value type": lambda k: SetValueType(main, value(k), T.FLOAT16, ["batch", 16]),
        "set dimension": lambda k: SetDimension(main, value(k), 0, 4),
        "rename value": lambda k: RenameValue(main, value(k), f"v_renamed_{k}"),
    }


def _time_edits(doc: Document, reps: int) -> dict[str, tuple[float, float]]:
    """Median (execute, undo) seconds per kind of edit."""
    out = {}
    for label, make in _edits(doc).items():
        do_t, undo_t = [], []
        for k in range(reps):
            try:
                cmd = make(k)
            except LookupError:
                break
            t = time.perf_counter()
            doc.execute(cmd)
            do_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            doc.undo()
            undo_t.append(time.perf_counter() - t)
        if do_t:
            out[label] = (statistics.median(do_t), statistics.median(undo_t))
    return out


def run(model: onnx.ModelProto, reps: int = 15) -> dict:
    n = sum(1 for _ in Document(model).index.iter_nodes())
    report: dict = {"nodes": n}
    # reference: onnx.checker on the same model, same process
    t = time.perf_counter()
    onnx.checker.check_model(model)
    report["checker_s"] = time.perf_counter() - t

    bare = Document(onnx.ModelProto.FromString(model.SerializeToString()))
    report["bare"] = _time_edits(bare, reps)

    doc = Document(onnx.ModelProto.FromString(model.SerializeToString()))
    validator = Validator(doc)
    t = time.perf_counter()
    validator.validate_all()
    report["validate_all_s"] = time.perf_counter() - t
    report["initial_problems"] = len(validator.problems)
    # time the validator's own share too: wrap its handler
    spent: list[float] = []
    doc.changed.disconnect(validator._on_changed)

    def timed(cs: object) -> None:
        t0 = time.perf_counter()
        validator._on_changed(cs)
        spent.append(time.perf_counter() - t0)

    doc.changed.connect(timed)
    report["live"] = _time_edits(doc, reps)
    report["validation_only_ms"] = statistics.median(spent) * 1000
    report["validation_max_ms"] = max(spent) * 1000
    # the live problems stayed exact through all of that
    fresh = Validator(doc, live=False).validate_all()
    assert {p.subject for p in fresh} == {p.subject for p in validator.problems}
    every = [x for pair in report["live"].values() for x in pair]
    report["median_ms"] = statistics.median(every) * 1000
    report["max_median_ms"] = max(every) * 1000
    return report


def print_report(r: dict) -> None:
    print(f"model: {r['nodes']} nodes; validate_all {r['validate_all_s']:.2f} s "
          f"(onnx.checker.check_model {r['checker_s']:.2f} s, ratio {r['validate_all_s'] / r['checker_s']:.1f}x); "
          f"{r['initial_problems']} problems")
    print(f"{'edit':28} {'live do':>9} {'live undo':>10} {'bare do':>9} {'bare undo':>10}  (ms, medians)")
    for label, (d, u) in r["live"].items():
        bd, bu = r["bare"].get(label, (float("nan"), float("nan")))
        print(f"{label:28} {d * 1e3:9.2f} {u * 1e3:10.2f} {bd * 1e3:9.2f} {bu * 1e3:10.2f}")
    print(f"median over all edits and undos, edit + validation: {r['median_ms']:.2f} ms "
          f"(slowest kind {r['max_median_ms']:.2f} ms)")
    print(f"the validator's share alone: median {r['validation_only_ms']:.2f} ms, "
          f"max {r['validation_max_ms']:.2f} ms per edit")


def test_bench_edit_validate_latency() -> None:
    r = run(make_chain_model(10_000), reps=9)
    print_report(r)
    assert r["median_ms"] < 50


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--model", help="benchmark this model instead of the generated chain")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args(argv)
    model = onnx.load(args.model, load_external_data=False) if args.model else make_chain_model(args.nodes)
    print_report(run(model, args.reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
