#!/usr/bin/env python3
"""Opening a diff view of two 10,000-node models, against opening one of them.

    python tests/benchmarks/bench_diffview.py [--layers 80] [--repeat 3]

Makes a transformer-like model (``--layers`` layers of ~126 nodes in name scopes; 80 make
10,080 nodes) and a second version of it as another exporter would write it: every node
renamed, an attribute changed in two layers, a node removed (its reader reconnected), one
weight changed. In one offscreen window it then times, interleaved ``--repeat`` times:

* the diff view from the click to both panes laid out and coloured (open both files, the
  diff, the display data, two first layouts);
* the reference: opening model A alone in a tab (parse, index, first layout).

Reports medians, the ratio, and the phases of the diff view's worker. Shared machines are
noisy: compare the ratio, and say the load average. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def build(layers: int, *, second: bool) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x, width = "input", 16

    def add(op: str, ins: list[str], name: str, **attrs) -> str:  # noqa: ANN003
        out = f"{name}_out"
        nodes.append(helper.make_node(op, ins, [out], name=name.replace("/model/", "/m/") if second else name, **attrs))
        return out

    for layer in range(layers):
        p = f"/model/layers.{layer}"

        def weight(name: str, shape: tuple[int, ...]) -> str:
            t = numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), f"{p}/{name}")
            inits.append(t)
            return t.name

        h = add("LayerNormalization", [x, weight("ln_g", (width,)), weight("ln_b", (width,))], f"{p}/ln/LayerNorm",
                axis=-1)
        qkv = []
        for k in ("q", "k", "v"):
            m = add("MatMul", [h, weight(f"{k}_w", (width, width))], f"{p}/attn/{k}_proj/MatMul")
            qkv.append(add("Add", [m, weight(f"{k}_b", (width,))], f"{p}/attn/{k}_proj/Add"))
        for j in range(30):
            qkv[0] = add("Mul" if j % 2 else "Add", [qkv[0], qkv[1 + j % 2]], f"{p}/attn/mix{j}")
        s = add("Softmax", [qkv[0]], f"{p}/attn/Softmax", axis=-1)
        r = add("Add", [add("MatMul", [s, weight("o_w", (width, width))], f"{p}/attn/o_proj/MatMul"), x],
                f"{p}/residual/Add")
        h2 = r
        for j in range(40):
            h2 = add(("Relu", "Sigmoid", "Neg", "Abs")[j % 4], [h2], f"{p}/mlp/act{j}")
        for j in range(45):
            h2 = add("Add", [h2, r], f"{p}/mlp/sum{j}")
        x = add("Add", [h2, r], f"{p}/out/Add")
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, width])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, width])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    if second:
        nd = model.graph.node
        next(n for n in nd[len(nd) // 20:] if n.op_type == "LayerNormalization").attribute[0].i = -2
        next(n for n in nd[len(nd) * 2 // 5:] if n.op_type == "Softmax").attribute[0].i = 1
        k = next(i for i in range(len(nd) * 3 // 5, len(nd)) if nd[i].op_type == "Neg")
        src, out = nd[k].input[0], nd[k].output[0]
        del nd[k]
        for n in nd:
            for i, v in enumerate(n.input):
                if v == out:
                    n.input[i] = src
        t = model.graph.initializer[len(model.graph.initializer) // 2]
        w = numpy_helper.to_array(t).copy()
        w.flat[0] += 1.0
        t.CopyFrom(numpy_helper.from_array(w, t.name))
    return model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=80)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    folder = Path(tempfile.mkdtemp(prefix="bench-diffview-"))
    a, b = folder / "a.onnx", folder / "b.onnx"
    onnx.save(build(args.layers, second=False), a)
    onnx.save(build(args.layers, second=True), b)

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from widgets.diffview import open_diff_view
    from widgets.diffview.actions import side_of_path
    from widgets.settings.store import Settings
    from widgets.window.main_window import MainWindow

    window = MainWindow(settings=Settings())
    window.resize(1600, 1000)
    window.show()

    def wait(done) -> None:  # noqa: ANN001
        while not done():
            app.processEvents()
            time.sleep(0.002)

    views, singles, phases = [], [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        view = open_diff_view(window, side_of_path(a), side_of_path(b))
        wait(lambda: view.is_ready)
        views.append(time.perf_counter() - t)
        phases.append(dict(view.result.seconds))
        stops = len(view.stops)
        window.close_tab(window.tabs.indexOf(view))
        t = time.perf_counter()
        window.open_path(a)
        wait(lambda: window.current_tab() is not None and window.current_tab().is_ready)
        singles.append(time.perf_counter() - t)
        tab = window.current_tab()
        tab.doc.stack.set_clean()
        window.close_tab(window.tabs.indexOf(tab))
    n_nodes = len(onnx.load(a, load_external_data=False).graph.node)
    view_s, single_s = statistics.median(views), statistics.median(singles)
    print(f"{n_nodes} nodes; load average {os.getloadavg()[0]:.1f}")
    print(f"diff view ready: median {view_s:.2f} s {[round(v, 2) for v in views]}; {stops} changes")
    print(f"open A alone:    median {single_s:.2f} s {[round(v, 2) for v in singles]}")
    print(f"ratio {view_s / single_s:.2f}x")
    keys = phases[0].keys()
    print("worker phases (median s): " + ", ".join(f"{k} {statistics.median(p[k] for p in phases):.2f}" for k in keys))
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
