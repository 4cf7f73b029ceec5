"""Numeric-debugging benchmark (not part of the default test run).

Usage:
    python tests/benchmarks/bench_debug.py [MODEL.onnx] [--mb 50] [--nodes 1000] [--repeat 3]

1. Compare cost. On a ~50 MB model (synthesised: a stack of 1024x1024 MatMul + Add + Tanh
   layers with random weights, or MODEL when given), the time of ``compare_runs`` with every
   intermediate tensor compared, against the reference: ONE run of the same model with all
   intermediates requested, in the same warm Runner. Target: compare <= 3x the reference.
   Two pairs of sides are timed: onnxruntime with all graph optimizations vs none (two
   onnxruntime configurations), and onnxruntime vs the ONNX reference evaluator.
2. Reduce cost. On a synthesised model of ``--nodes`` nodes (a chain of Add/Mul/Tanh with a
   side branch every 10 nodes) with a NaN planted at 70 % of the way, the number of backend
   runs ``reduce_model`` makes, by pure bisection (no hint from the full run) and with the
   hint. Target: runs <= 2 * log2(n) + 20.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def mlp_model(megabytes: float, width: int = 1024) -> onnx.ModelProto:
    layers = max(1, int(megabytes * 1e6 / (width * width * 4)))
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    for k in range(layers):
        w = (rng.standard_normal((width, width)) / math.sqrt(width)).astype(np.float32)
        b = (rng.standard_normal(width) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{k}"), numpy_helper.from_array(b, f"b{k}")]
        nodes += [helper.make_node("MatMul", [x, f"w{k}"], [f"mm{k}"], name=f"layer{k}/MatMul"),
                  helper.make_node("Add", [f"mm{k}", f"b{k}"], [f"add{k}"], name=f"layer{k}/Add"),
                  helper.make_node("Tanh", [f"add{k}"], [f"h{k}"], name=f"layer{k}/Tanh")]
        x = f"h{k}"
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, width])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [64, width])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def chain_model(n: int, nan_at: float = 0.7) -> onnx.ModelProto:
    """``n`` nodes; the node at ``nan_at`` of the way computes Sqrt(x - 100): NaN."""
    nodes, inits = [], [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
                        numpy_helper.from_array(np.array(100.0, np.float32), "hundred")]
    x, k = "x", 0
    plant = int(n * nan_at)
    while len(nodes) < n:
        i = len(nodes)
        if i == plant:
            nodes.append(helper.make_node("Sub", [x, "hundred"], [f"s{i}"], name=f"n{i}_sub"))
            nodes.append(helper.make_node("Sqrt", [f"s{i}"], [f"v{i}"], name=f"n{i}_sqrt_planted"))
        elif i % 10 == 5:  # a side branch joining back
            nodes.append(helper.make_node("Mul", [x, "half"], [f"b{i}"], name=f"n{i}_branch"))
            nodes.append(helper.make_node("Add", [x, f"b{i}"], [f"v{i}"], name=f"n{i}_join"))
        else:
            op = ("Tanh", "Add")[k % 2]
            ins = [x] if op == "Tanh" else [x, "half"]
            nodes.append(helper.make_node(op, ins, [f"v{i}"], name=f"n{i}_{op.lower()}"))
            k += 1
        x = nodes[-1].output[0]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, 8])], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def bench_compare(model: onnx.ModelProto | str, repeat: int) -> None:
    from editor.debug import RunSpec, compare_runs
    from editor.debug.mapping import same_model_map
    from editor.runtime import Runner, RunOptions
    from editor.runtime.inputs import make_inputs
    from editor.runtime.source import ModelSource

    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(model, load_external_data=False)
    source = ModelSource.from_any(model if isinstance(model, onnx.ModelProto) else str(model))
    size = len(proto.SerializeToString()) / 1e6 if isinstance(model, onnx.ModelProto) else Path(model).stat().st_size / 1e6
    names = [p.a for p in same_model_map(proto).pairs]
    feeds = make_inputs(proto)
    names = [n for n in names if n not in feeds]
    print(f"compare: model {size:.1f} MB, {len(proto.graph.node)} nodes, {len(names)} tensors compared")
    spec = model if isinstance(model, onnx.ModelProto) else str(model)
    with Runner() as runner:
        def one_run(backend: str, options: RunOptions | None = None) -> float:
            t = time.perf_counter()
            r = runner.run(source, feeds, outputs=names, backend=backend, options=options)
            assert r.ok, r.error
            return time.perf_counter() - t

        a = RunSpec(spec, "ort")
        for label, b in (("ort all vs ort disable", RunSpec(spec, "ort", RunOptions(graph_optimization_level="disable"))),
                         ("ort vs reference evaluator", RunSpec(spec, "reference"))):
            compare_runs(a, b, feeds, runner=runner)  # warm: worker, sessions, parsed model
            refs, b_runs, times = [], [], []
            for _ in range(repeat):  # interleaved, so a change in machine load hits all three alike
                refs.append(one_run("ort"))
                b_runs.append(one_run(b.backend or "ort", b.options))
                t = time.perf_counter()
                c = compare_runs(a, b, feeds, runner=runner)
                times.append(time.perf_counter() - t)
            ref, ref_b, med = statistics.median(refs), statistics.median(b_runs), statistics.median(times)
            print(f"  {label}: one ort run with all intermediates {ref * 1000:.1f} ms, one B run {ref_b * 1000:.1f} ms, "
                  f"compare {med * 1000:.1f} ms = {med / ref:.2f}x one ort run (target <= 3x), "
                  f"{med / (ref + ref_b):.2f}x the two runs it needs; {c.counts()['compared']} compared, "
                  f"outputs {'agree' if c.outputs_ok else 'differ'}")


def bench_reduce(n: int) -> None:
    from editor.debug import NanCheck, reduce_model
    from editor.runtime import Runner

    model = chain_model(n)
    nodes = len(model.graph.node)
    bound = 2 * math.log2(nodes) + 20
    with Runner() as runner:
        for hints in (False, True):
            t = time.perf_counter()
            r = reduce_model(model, NanCheck("ort"), runner=runner, use_hints=hints)
            dt = time.perf_counter() - t
            print(f"reduce: {nodes} nodes, {'with hint' if hints else 'pure bisection'}: {r.runs} runs "
                  f"(bound 2*log2(n)+20 = {bound:.1f}), {dt:.1f} s, result {r.nodes}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="?")
    p.add_argument("--mb", type=float, default=50.0)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    if args.model:
        bench_compare(args.model, args.repeat)
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:  # a file, as the CLI and the window run it
            path = Path(tmp) / "mlp.onnx"
            onnx.save(mlp_model(args.mb), path)
            bench_compare(str(path), args.repeat)
    bench_reduce(args.nodes)


if __name__ == "__main__":
    main()
