"""How long the cost model takes on a large model, against loading it.

Run:  PYTHONPATH=. python tests/benchmarks/bench_cost.py [--layers 250] [--model PATH] [--reps 5]

Without ``--model`` it builds a torch-export-like transformer with symbolic ``batch`` and
``seq`` (per layer: LayerNorm, Q/K/V MatMuls, the Shape→Gather→Unsqueeze→Concat→Reshape
chains of a torch export, attention, MLP; ~40 nodes a layer). Prints the median time of
:func:`editor.cost.model_cost` (shape engine included) and its ratio to ``onnx.load`` of the
same file; target: <= 0.5 s on the 11,812-node llama export.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def make_transformer(layers: int = 250, hidden: int = 64, heads: int = 4) -> onnx.ModelProto:
    nodes, inits = [], []

    def w(name, shape):
        inits.append(numpy_helper.from_array(np.zeros(shape, np.float32), name))
        return name

    def c(name, values):
        inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    c("zero", [0]), c("one", [1]), c("heads_hd", [heads, hidden // heads]), c("perm_axes", [2])
    x = "x"
    for k in range(layers):
        p = f"l{k}_"
        nodes.append(h.make_node("LayerNormalization", [x, w(p + "g", [hidden]), w(p + "b", [hidden])], [p + "ln"],
                                 axis=-1))
        nodes.append(h.make_node("Shape", [p + "ln"], [p + "shape"]))
        nodes.append(h.make_node("Gather", [p + "shape", "zero"], [p + "bdim"], axis=0))
        nodes.append(h.make_node("Gather", [p + "shape", "one"], [p + "sdim"], axis=0))
        nodes.append(h.make_node("Concat", [p + "bdim", p + "sdim", "heads_hd"], [p + "newshape"], axis=0))
        for name in "qkv":
            nodes.append(h.make_node("MatMul", [p + "ln", w(p + "w" + name, [hidden, hidden])], [p + name]))
            nodes.append(h.make_node("Reshape", [p + name, p + "newshape"], [p + name + "r"]))
            nodes.append(h.make_node("Transpose", [p + name + "r"], [p + name + "t"], perm=[0, 2, 1, 3]))
        nodes.append(h.make_node("Transpose", [p + "kt"], [p + "ktt"], perm=[0, 1, 3, 2]))
        nodes.append(h.make_node("MatMul", [p + "qt", p + "ktt"], [p + "scores"]))
        nodes.append(h.make_node("Softmax", [p + "scores"], [p + "probs"], axis=-1))
        nodes.append(h.make_node("MatMul", [p + "probs", p + "vt"], [p + "ctx"]))
        nodes.append(h.make_node("Transpose", [p + "ctx"], [p + "ctxt"], perm=[0, 2, 1, 3]))
        nodes.append(h.make_node("Concat", [p + "bdim", p + "sdim", c(p + "h", [hidden])], [p + "flat"], axis=0))
        nodes.append(h.make_node("Reshape", [p + "ctxt", p + "flat"], [p + "ctxr"]))
        nodes.append(h.make_node("MatMul", [p + "ctxr", w(p + "wo", [hidden, hidden])], [p + "o"]))
        nodes.append(h.make_node("Add", [x, p + "o"], [p + "res"]))
        nodes.append(h.make_node("MatMul", [p + "res", w(p + "w1", [hidden, 4 * hidden])], [p + "up"]))
        nodes.append(h.make_node("Gelu", [p + "up"], [p + "act"], domain="") if False else
                     h.make_node("Relu", [p + "up"], [p + "act"]))
        nodes.append(h.make_node("MatMul", [p + "act", w(p + "w2", [4 * hidden, hidden])], [p + "down"]))
        nodes.append(h.make_node("Add", [p + "res", p + "down"], [p + "out"]))
        x = p + "out"
    g = h.make_graph(nodes, "transformer", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", hidden])],
                     [h.make_tensor_value_info(x, T.FLOAT, None)], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=250)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    from editor.cost import model_cost

    with tempfile.TemporaryDirectory() as tmp:
        path = args.model
        if path is None:
            path = Path(tmp) / "transformer.onnx"
            onnx.save(make_transformer(args.layers), path)
        loads, costs, cpus = [], [], []
        cost = None
        for _ in range(args.reps):
            t0 = time.perf_counter()
            model = onnx.load(str(path), load_external_data=False)
            loads.append(time.perf_counter() - t0)
            t0, c0 = time.perf_counter(), time.process_time()
            cost = model_cost(model)
            costs.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    load, run, cpu = statistics.median(loads), statistics.median(costs), statistics.median(cpus)
    print(f"{path.name}: {len(cost.nodes)} nodes, {cost.unknown_nodes} unknown; MACs {str(cost.macs)[:80]}")
    # CPU time is the figure to quote on a shared machine: wall time includes other loads
    print(f"cost model {run * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (medians of {args.reps}); "
          f"onnx.load {load * 1000:.0f} ms wall; ratio {run / load:.2f}x")


if __name__ == "__main__":
    main()
