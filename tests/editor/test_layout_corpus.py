"""Layout invariants on every model of the corpus (flat view, collapsed view, subgraph bodies).

One test walks the corpus (so it is cheap per model: build + layout + numpy checks) and
reports every failure at once instead of stopping at the first: a fixed sample in the default
run, every model under ``--corpus=all`` (``make test-all``; tests/conftest.py).
"""

from __future__ import annotations

import onnx
import pytest

from editor.layout import layout_graph
from editor.viewmodel import build_display_graph, default_expanded, function_graph, group_tree
from tests.conftest import CORPUS, corpus_models, corpus_walk
from tests.editor.layout_checks import assert_layout_invariants


def _graphs(model: onnx.ModelProto):
    """(label, GraphProto) for the main graph, every subgraph body and every function."""
    stack = [("main", model.graph)]
    for f in model.functions:
        stack.append((f"function {f.domain}::{f.name}", function_graph(f)))
    while stack:
        label, g = stack.pop()
        yield label, g
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.append((f"{label}/{node.name or node.op_type}.{a.name}", a.g))
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for k, sg in enumerate(a.graphs):
                        stack.append((f"{label}/{node.name or node.op_type}.{a.name}[{k}]", sg))


def _check_model(path) -> list[str]:
    model = onnx.load(str(path), load_external_data=False)
    opsets = {o.domain: o.version for o in model.opset_import}
    errors = []
    for label, g in _graphs(model):
        ids = list(range(len(g.node)))
        tree = group_tree(g)
        views = [None, set()]
        if tree.parent:  # the app's first view, and everything open (compound layout with frames)
            views += [default_expanded(g, groups=tree), set(tree.parent)]
        for expanded in views:
            kind = "flat" if expanded is None else f"{len(expanded)} open"
            where = f"{path.relative_to(CORPUS)} [{label}] {kind}"
            try:
                dg = build_display_graph(g, ids, opsets=opsets, expanded=expanded)
                res = layout_graph(dg)
                assert_layout_invariants(dg, res, where=where)
                for g_path, (fx, fy, fw, fh) in res.frames.items():
                    # every member of an open group lies inside its frame
                    for key, grp in dg.box_groups.items():
                        if grp == g_path:
                            bx, by = res.positions[key]
                            b = next(b for b in dg.boxes if b.key == key)
                            assert fx <= bx and bx + b.width <= fx + fw and fy <= by and by + b.height <= fy + fh, \
                                f"{where}: {key} outside the frame of {g_path}"
            except AssertionError as exc:
                errors.append(str(exc))
            except Exception as exc:  # noqa: BLE001 - report every model, not just the first
                errors.append(f"{where}: {type(exc).__name__}: {exc}")
    return errors


@pytest.mark.slow
def test_layout_invariants_on_every_corpus_model(corpus_dir):
    whole = corpus_models()
    assert len(whole) > 1900, f"corpus looks incomplete: {len(whole)} models"
    errors: list[str] = []
    for p in corpus_walk():
        errors += _check_model(p)
    assert not errors, f"{len(errors)} failures, first: " + "\n".join(errors[:20])
