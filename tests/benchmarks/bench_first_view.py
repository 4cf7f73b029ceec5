"""How long the first view's display model takes to build (issue 30, part C): what the window
and ``render`` do before the layout — ``group_tree``, ``default_expanded``, then
``build_display_graph`` with that tree — and a view change (a group opened or closed: the
build again, with the source's tree), in CPU seconds of this process, best of ``--repeat``,
beside ``onnx.load`` of the same file (not part of the default test run).

    PYTHONPATH=. python tests/benchmarks/bench_first_view.py MODEL.onnx [MODEL.onnx ...] [--repeat 9]

The int8 TTS-like fixture is ``make_layout_fixtures.py``'s ``tts_like_int8.onnx``. CPU time,
not wall time: the machines we share are loaded, and wall time then measures the queue.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.shapes import infer_model  # noqa: E402
from editor.shapes.declare import label_value_info  # noqa: E402
from editor.viewmodel import build_display_graph, default_expanded, group_tree  # noqa: E402


def best_cpu(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        out.append(time.process_time() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    print("| model | nodes | first view boxes | onnx.load s | first view s | view change s |")
    print("|---|---|---|---|---|---|")
    for path in a.models:
        m = onnx.load(path, load_external_data=False)
        g = m.graph
        ids = list(range(len(g.node)))
        opsets = {o.domain: o.version for o in m.opset_import}
        vi = label_value_info(g, infer_model(m))   # the edge labels the window draws
        tree = group_tree(g)
        exp = default_expanded(g, groups=tree)

        def first():
            t = group_tree(g)
            return build_display_graph(g, ids, opsets=opsets, expanded=default_expanded(g, groups=t), groups=t,
                                       value_info=vi)

        load_s = best_cpu(lambda: onnx.load(path, load_external_data=False), a.repeat)
        first_s = best_cpu(first, a.repeat)
        change_s = best_cpu(lambda: build_display_graph(g, ids, opsets=opsets, expanded=exp, groups=tree,
                                                        value_info=vi), a.repeat)
        print(f"| {Path(path).name} | {len(g.node)} | {len(first().boxes)} | {load_s:.3f} | {first_s:.3f} "
              f"| {change_s:.3f} |", flush=True)


if __name__ == "__main__":
    main()
