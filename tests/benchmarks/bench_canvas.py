"""Canvas frame-time benchmark (not part of the default test run).

Usage:
    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_canvas.py [MODEL.onnx] [--layers N]

Without a model it synthesises a transformer-like graph of ``--layers`` blocks of 20 nodes
(500 blocks = 10,000 nodes, residual connections, a mask tensor broadcast to every block).
With ``/tmp/onnx-large/llama_200x128/model.onnx`` (from ../shared/corpus/make_large_models.py)
it also times the end-to-end ``render --expanded`` path.

It reports, for a 1600x1000 view:
- the median time of a frame with every node visible (zoom to fit, batched level of detail),
  and the same frame with batching switched off (every box painting itself) as the reference
  measured in the same process: the ratio is what batching buys;
- the median frame time zoomed in to 100 % (text, labels), and a sweep of zoom levels
  from 0.5 % to 200 % with the drawing mode each one uses (overview / batch / full);
- the time to build the scene.
Frames are painted through the viewport's own paint path (``viewport().render``), the
one the screen gets. ``QGraphicsView.render`` takes another route in Qt that walks every
child of a visible parent and is not what users see.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def synthetic_model(layers: int = 500, hidden: int = 32) -> onnx.ModelProto:
    """A transformer-like stack: 20 nodes per block, residuals, a mask fed to every block."""
    nodes = []
    inits = []
    x = "x"
    for i in range(layers):
        p = f"/model/layers.{i}"
        w = [f"{p}.w{k}" for k in range(4)]
        inits += [numpy_helper.from_array(np.zeros((hidden, hidden), np.float32), name) for name in w]
        n = lambda op, ins, outs, name, **kw: nodes.append(helper.make_node(op, ins, outs, name=f"{p}/{name}", **kw))  # noqa: E731
        n("LayerNormalization", [x, "ln_scale"], [f"{p}/ln"], "input_layernorm/LayerNorm", axis=-1)
        n("MatMul", [f"{p}/ln", w[0]], [f"{p}/q"], "self_attn/q_proj/MatMul")
        n("MatMul", [f"{p}/ln", w[1]], [f"{p}/k"], "self_attn/k_proj/MatMul")
        n("MatMul", [f"{p}/ln", w[2]], [f"{p}/v"], "self_attn/v_proj/MatMul")
        n("Transpose", [f"{p}/k"], [f"{p}/kt"], "self_attn/Transpose", perm=[1, 0])
        n("MatMul", [f"{p}/q", f"{p}/kt"], [f"{p}/s"], "self_attn/MatMul")
        n("Mul", [f"{p}/s", "scale"], [f"{p}/ss"], "self_attn/Mul")
        n("Add", [f"{p}/ss", "mask"], [f"{p}/sm"], "self_attn/Add")
        n("Softmax", [f"{p}/sm"], [f"{p}/a"], "self_attn/Softmax", axis=-1)
        n("MatMul", [f"{p}/a", f"{p}/v"], [f"{p}/o"], "self_attn/MatMul_1")
        n("MatMul", [f"{p}/o", w[3]], [f"{p}/op"], "self_attn/o_proj/MatMul")
        n("Add", [x, f"{p}/op"], [f"{p}/r1"], "Add")
        n("LayerNormalization", [f"{p}/r1", "ln_scale"], [f"{p}/ln2"], "post_attention_layernorm/LayerNorm", axis=-1)
        n("MatMul", [f"{p}/ln2", w[0]], [f"{p}/g"], "mlp/gate_proj/MatMul")
        n("Sigmoid", [f"{p}/g"], [f"{p}/gs"], "mlp/act/Sigmoid")
        n("Mul", [f"{p}/g", f"{p}/gs"], [f"{p}/gm"], "mlp/act/Mul")
        n("MatMul", [f"{p}/ln2", w[1]], [f"{p}/u"], "mlp/up_proj/MatMul")
        n("Mul", [f"{p}/gm", f"{p}/u"], [f"{p}/h"], "mlp/Mul")
        n("MatMul", [f"{p}/h", w[2]], [f"{p}/d"], "mlp/down_proj/MatMul")
        n("Add", [f"{p}/r1", f"{p}/d"], [f"{p}/out"], "Add_1")
        x = f"{p}/out"
    inits += [helper.make_tensor("ln_scale", TensorProto.FLOAT, [hidden], [1.0] * hidden),
              helper.make_tensor("scale", TensorProto.FLOAT, [], [0.125])]
    graph = helper.make_graph(
        nodes, "synthetic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 128, 128])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 128, hidden])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _median_frame(view, image, repeats: int) -> float:
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter

    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        painter = QPainter(image)
        # the viewport's own paint path (paintEvent), what the screen gets
        view.viewport().render(painter, QPoint())
        painter.end()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(model: onnx.ModelProto, repeats: int = 7) -> dict[str, float]:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    import widgets.canvas  # noqa: F401 - installs the None guard first
    from editor.layout import layout_graph
    from editor.viewmodel import build_display_graph
    from widgets.canvas.scene import GraphScene
    from widgets.canvas.view import GraphView

    app = QApplication.instance() or QApplication([])
    g = model.graph
    opsets = {o.domain: o.version for o in model.opset_import}
    t = time.perf_counter()
    display = build_display_graph(g, list(range(len(g.node))), opsets=opsets, expanded=None)
    t_vm = time.perf_counter() - t
    t = time.perf_counter()
    result = layout_graph(display)
    t_layout = time.perf_counter() - t
    t = time.perf_counter()
    scene = GraphScene()
    scene.set_graph(display, result)
    t_scene = time.perf_counter() - t
    view = GraphView(scene)
    view.resize(1600, 1000)
    view.show()
    app.processEvents()
    image = QImage(view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    view.zoom_to_fit()
    visible = view.visible_scene_rect()
    n_visible = sum(1 for it in scene.node_items().values() if visible.intersects(it.scene_rect()))
    fit_scale = view.zoom()
    _median_frame(view, image, 2)  # warm caches
    batched = _median_frame(view, image, repeats)
    mode_at_fit = scene.mode
    scene.set_mode("batch")  # the intermediate mode, forced at the same zoom
    _median_frame(view, image, 1)
    batch_mode = _median_frame(view, image, repeats)
    scene.set_mode("full")  # reference: every box paints itself
    per_item = _median_frame(view, image, max(3, repeats // 2))
    scene.set_detail(view.zoom())
    view.set_zoom(1.0)
    view.center_on(display.boxes[len(display.boxes) // 2].key)
    _median_frame(view, image, 2)
    zoomed = _median_frame(view, image, repeats)
    sweep = {}
    for z in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0):
        view.set_zoom(z)
        view.center_on(display.boxes[len(display.boxes) // 2].key)
        _median_frame(view, image, 1)
        sweep[f"frame_at_zoom_{z:g}_ms ({scene.mode})"] = _median_frame(view, image, max(3, repeats // 2)) * 1000
    view.close()
    return {
        **sweep,
        "nodes": len(display.boxes),
        "edges": len(display.edges),
        "visible_at_fit": n_visible,
        "fit_scale": fit_scale,
        "viewmodel_s": t_vm,
        "layout_s": t_layout,
        "scene_build_s": t_scene,
        "frame_fit_batched_ms": batched * 1000,
        "mode_at_fit": mode_at_fit,
        "frame_fit_forced_batch_ms": batch_mode * 1000,
        "frame_fit_per_item_ms": per_item * 1000,
        "batching_speedup": per_item / batched if batched else float("nan"),
        "frame_zoomed_100pct_ms": zoomed * 1000,
    }


def bench_render_cli(path: Path) -> dict[str, float]:
    """End-to-end `render --expanded` after the model is open (load excluded)."""
    import argparse as ap

    from widgets.export.render import configure_parser, load_model, render_model

    parser = ap.ArgumentParser()
    configure_parser(parser)
    model = load_model(path)
    out = {}
    for suffix in (".png", ".svg"):
        args = parser.parse_args([str(path), "-o", f"/tmp/bench_render{suffix}", "--expanded"])
        t = time.perf_counter()
        facts = render_model(model, args.output, args)
        out[f"render_expanded{suffix}_s"] = time.perf_counter() - t
        out["boxes"] = facts["boxes"]
        for k, v in facts["timings"].items():
            out[f"  {suffix} {k}_s"] = v
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?")
    parser.add_argument("--layers", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    model = onnx.load(args.model, load_external_data=False) if args.model else synthetic_model(args.layers)
    for k, v in bench(model, args.repeats).items():
        print(f"{k:28s} {v:10.3f}" if isinstance(v, float) else f"{k:28s} {v!s:>10}")
    llama = Path(args.model) if args.model else Path("/tmp/onnx-large/llama_200x128/model.onnx")
    if llama.is_file():
        print(f"-- render CLI on {llama}")
        for k, v in bench_render_cli(llama).items():
            print(f"{k:28s} {v:10.3f}" if isinstance(v, float) else f"{k:28s} {v!s:>10}")


if __name__ == "__main__":
    main()
