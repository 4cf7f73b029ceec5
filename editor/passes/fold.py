"""Constant folding: evaluate nodes whose inputs are all constant, keep the results as
initializers.

Evaluation uses the ONNX reference evaluator one node at a time (exact semantics, no
onnxruntime graph optimizations mixed in). Nodes are not folded when they are random,
have subgraphs, belong to unknown domains, or would create a tensor larger than
``max_elements`` (folding a ConstantOfShape into a 100 MB initializer helps nobody).
"""

from __future__ import annotations

import numpy as np
import onnx

from editor.commands import AddInitializer, DeleteNodes, RemoveInitializer
from editor.commands.initializers import constant_tensor
from editor.commands.tensors import array_to_tensor, tensor_to_array
from editor.document import Document, ScopeId, Transaction
from editor.passes.base import PassPlan, plan_from

NONDETERMINISTIC = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"}
MAX_ELEMENTS = 1 << 20


def _known_values(doc: Document, sid: ScopeId) -> dict[str, onnx.TensorProto]:
    s = doc.scope(sid)
    g = s.graph
    inputs = set(s.input_names())
    known: dict[str, onnx.TensorProto] = {}
    if isinstance(g, onnx.GraphProto):
        for t in g.initializer:
            if t.name not in inputs:  # an initializer that is also an input can be overridden
                known[t.name] = t
    for nid in s.node_ids:
        n = doc.node(nid)
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output:
            try:
                known[n.output[0]] = constant_tensor(n)
            except ValueError:
                pass
    return known


def plan_constant_folding(doc: Document, scope: ScopeId | None = None, *,
                          max_elements: int = MAX_ELEMENTS) -> PassPlan:
    sid = doc.index.main if scope is None else scope
    s = doc.scope(sid)
    if not isinstance(s.graph, onnx.GraphProto):
        return PassPlan("Constant folding", [], None, ["functions have no initializers to fold into"])
    from onnx.reference import ReferenceEvaluator

    known = _known_values(doc, sid)
    arrays: dict[str, np.ndarray] = {}
    outputs = set(s.output_names())
    folded: list[int] = []
    results: dict[str, np.ndarray] = {}
    warnings: list[str] = []
    opsets = doc.opsets()
    for nid in s.node_ids:
        n = doc.node(nid)
        if n.op_type == "Constant" or n.domain not in ("", "ai.onnx"):
            continue
        if n.op_type in NONDETERMINISTIC or doc.index.children.get(nid):
            continue
        if any(o in outputs for o in n.output):
            continue  # a graph output stays produced by its node
        ins = [i for i in n.input if i]
        if not ins or not all(i in known or i in results for i in ins):
            continue
        feeds = {}
        try:
            for i in ins:
                if i not in arrays and i not in results:
                    arrays[i] = tensor_to_array(known[i], doc.store)
                feeds[i] = results[i] if i in results else arrays[i]
            if any(getattr(v, "size", 0) > max_elements for v in feeds.values()):
                continue
            model = _single_node_model(n, feeds, opsets)
            outs = ReferenceEvaluator(model).run(None, feeds)
        except Exception as exc:  # noqa: BLE001 - a node we cannot evaluate is simply kept
            warnings.append(f"kept {n.op_type} {n.name!r}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            continue
        if any(not isinstance(o, np.ndarray) or o.size > max_elements for o in outs):
            continue
        for name, value in zip(n.output, outs):
            if name:
                results[name] = value
        folded.append(nid)
    if not folded:
        return PassPlan("Constant folding", [], None, warnings)
    produced = [name for nid in folded for name in doc.node(nid).output if name]
    # constants that only fed folded nodes become unused; remove_unused cleans them later
    changes = [f"fold {doc.node(nid).op_type} {doc.node(nid).name!r}" for nid in folded]
    changes.append(f"add {len(produced)} initializer(s)")

    def apply(d: Document, tx: Transaction) -> None:
        DeleteNodes(folded).run(d, tx)
        for name in produced:
            if d.initializer(sid, name) is not None:
                RemoveInitializer(sid, name, force=True).run(d, tx)
            AddInitializer(sid, name, array_to_tensor(results[name], name)).run(d, tx)

    return plan_from("Constant folding", changes, apply, warnings)


def _single_node_model(node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]) -> onnx.ModelProto:
    inputs = [
        onnx.helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in feeds.items()
    ]
    outputs = [onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o]
    graph = onnx.helper.make_graph([node], "fold", inputs, outputs)
    return onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()]
    )
