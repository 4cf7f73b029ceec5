"""How long the first view's display model takes to build (issue 30, part C): what the window
and ``render`` do before the layout — ``group_tree``, ``default_expanded``, then
``build_display_graph`` with that tree — and a view change (a group opened or closed: the
build again, with the source's tree), in CPU seconds of this process, best of ``--repeat``,
beside ``onnx.load`` of the same file (not part of the default test run).

    PYTHONPATH=. python tests/benchmarks/bench_first_view.py MODEL.onnx [MODEL.onnx ...] [--repeat 9]
        [--baseline DIR]

The int8 TTS-like fixture is ``make_layout_fixtures.py``'s ``tts_like_int8.onnx``. CPU time,
not wall time: the machines we share are loaded, and wall time then measures the queue.
The collector is paused while timing, as it is during the window's start-up.

``--baseline DIR`` (another checkout: ``git worktree add --detach DIR COMMIT``) times that
checkout's ``editor.viewmodel`` in the same process, interleaved with this one's (the rest
of ``editor`` is this checkout's), and says whether both give the same first view (boxes,
edges, groups, labels, in order): a speed-up must not change the picture.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from types import ModuleType

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.shapes import infer_model  # noqa: E402
from editor.shapes.declare import label_value_info  # noqa: E402
import editor  # noqa: E402
import editor.viewmodel  # noqa: E402
from editor.collector import paused  # noqa: E402


def best_cpu(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        with paused():
            t = time.process_time()
            fn()
            out.append(time.process_time() - t)
    return min(out)


def viewmodel_of(root: Path) -> ModuleType:
    """``root``'s ``editor.viewmodel`` package, imported beside this checkout's (which stays
    ``sys.modules["editor.viewmodel"]``); its other ``editor`` imports are this checkout's."""
    ours = {k: v for k, v in sys.modules.items() if k.startswith("editor.viewmodel")}
    for k in ours:
        del sys.modules[k]
    editor.__path__.insert(0, str(root / "editor"))
    try:
        theirs = importlib.import_module("editor.viewmodel")
    finally:
        editor.__path__.pop(0)
        for k in [k for k in sys.modules if k.startswith("editor.viewmodel")]:
            del sys.modules[k]
        sys.modules.update(ours)
    if not theirs.__file__.startswith(str(root)):
        raise SystemExit(f"--baseline {root}: imported {theirs.__file__} instead")
    return theirs


def picture(d) -> str:
    """Everything a display graph holds, in order (dict fields compare without it)."""
    return repr((d.boxes, d.edges, d.scope, *(list(m.items()) for m in (
        d.repeats, d.box_groups, d.group_parents, d.group_labels, d.folded))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--baseline", type=Path, help="another checkout whose view model is timed beside this one")
    a = ap.parse_args()
    trees = {"this": editor.viewmodel}
    if a.baseline:
        trees["baseline"] = viewmodel_of(a.baseline.resolve())
    print("| model | nodes | first view boxes | onnx.load s | " + " | ".join(
        f"first view s ({k}) | view change s ({k})" for k in trees) + (" | same picture |" if a.baseline else " |"))
    print("|---|---|---|---|" + "---|---|" * len(trees) + ("---|" if a.baseline else ""))
    for path in a.models:
        m = onnx.load(path, load_external_data=False)
        g = m.graph
        ids = list(range(len(g.node)))
        opsets = {o.domain: o.version for o in m.opset_import}
        vi = label_value_info(g, infer_model(m))   # the edge labels the window draws
        load_s = best_cpu(lambda: onnx.load(path, load_external_data=False), a.repeat)
        cells, pictures = [], []
        for vm in trees.values():
            tree = vm.group_tree(g)
            exp = vm.default_expanded(g, groups=tree)

            def first(vm=vm):
                t = vm.group_tree(g)
                return vm.build_display_graph(g, ids, opsets=opsets, expanded=vm.default_expanded(g, groups=t),
                                              groups=t, value_info=vi)

            pictures.append(first())
            cells.append(lambda first=first: best_cpu(first, 1))
            cells.append(lambda vm=vm, tree=tree, exp=exp: best_cpu(
                lambda: vm.build_display_graph(g, ids, opsets=opsets, expanded=exp, groups=tree, value_info=vi), 1))
        best = [float("inf")] * len(cells)
        for _ in range(a.repeat):   # interleaved: both trees see the same load
            for k, cell in enumerate(cells):
                best[k] = min(best[k], cell())
        same = (" | " + ("yes" if picture(pictures[0]) == picture(pictures[1]) else "NO")) if a.baseline else ""
        print(f"| {Path(path).name} | {len(g.node)} | {len(pictures[0].boxes)} | {load_s:.3f} | "
              + " | ".join(f"{t:.3f}" for t in best) + same + " |", flush=True)


if __name__ == "__main__":
    main()
