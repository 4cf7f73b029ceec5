"""Fusions from the onnx-optimizer family: BatchNormalization into Conv, MatMul+Add into Gemm.

Both only fire where the result is exactly equivalent: constant weights (initializers or
Constant nodes), an intermediate value used by nothing else and not a graph output, and
(for Gemm) an input known to be 2-D. New weights get new names; the old ones are left for
"remove unused" (another node may share them).
"""

from __future__ import annotations

import numpy as np
import onnx

from editor.commands import AddInitializer, DeleteNodes
from editor.commands.common import fresh_name
from editor.commands.tensors import array_to_tensor, tensor_to_array
from editor.commands.values import names_in_scope, value_type
from editor.document import Document, ScopeId, Transaction
from editor.document.ops import InsertItem, ReplaceItem, node_target
from editor.passes.base import PassPlan, plan_from
from editor.passes.fold import _known_values


def _attr(node: onnx.NodeProto, name: str, default):  # noqa: ANN001, ANN202
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _single_use(doc: Document, sid: ScopeId, name: str) -> int | None:
    s = doc.scope(sid)
    if name in s.output_names():
        return None
    uses = doc.consumers(sid, name, nested=True)
    return uses[0][0] if len(uses) == 1 else None


def plan_fuse_bn_into_conv(doc: Document, scope: ScopeId | None = None) -> PassPlan:
    sid = doc.index.main if scope is None else scope
    s = doc.scope(sid)
    known = _known_values(doc, sid)
    fusions = []  # (conv id, bn id, new W, new B, output name)
    for nid in s.node_ids:
        conv = doc.node(nid)
        if conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx") or len(conv.input) < 2:
            continue
        if conv.input[1] not in known or (len(conv.input) > 2 and conv.input[2] and conv.input[2] not in known):
            continue
        bn_id = _single_use(doc, sid, conv.output[0])
        if bn_id is None:
            continue
        bn = doc.node(bn_id)
        if bn.op_type != "BatchNormalization" or bn.input[0] != conv.output[0] or _attr(bn, "training_mode", 0):
            continue
        if any(o for o in bn.output[1:]) or not all(i in known for i in bn.input[1:5]):
            continue
        try:
            w = tensor_to_array(known[conv.input[1]], doc.store)
            b = (tensor_to_array(known[conv.input[2]], doc.store) if len(conv.input) > 2 and conv.input[2]
                 else np.zeros(w.shape[0], dtype=w.dtype))
            scale, bias, mean, var = (tensor_to_array(known[i], doc.store) for i in bn.input[1:5])
        except Exception:  # noqa: BLE001 - unreadable weights: leave the pair alone
            continue
        if w.dtype.kind != "f":
            continue
        eps = float(_attr(bn, "epsilon", 1e-5))
        k = scale / np.sqrt(var + eps)
        w2 = (w * k.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        b2 = ((b - mean) * k + bias).astype(w.dtype)
        fusions.append((nid, bn_id, w2, b2, bn.output[0]))
    changes = [
        f"fold {doc.node(b).op_type} {doc.node(b).name!r} into Conv {doc.node(c).name!r}" for c, b, *_ in fusions
    ]

    def apply(d: Document, tx: Transaction) -> None:
        taken = names_in_scope(d, sid)
        for conv_id, bn_id, w2, b2, out in fusions:
            conv = d.node(conv_id)
            wn = fresh_name(f"{conv.input[1]}_bn", taken)
            taken.add(wn)
            bn_name = fresh_name(f"{conv.name or 'conv'}_bias_bn", taken)
            taken.add(bn_name)
            AddInitializer(sid, wn, array_to_tensor(w2, wn)).run(d, tx)
            AddInitializer(sid, bn_name, array_to_tensor(b2, bn_name)).run(d, tx)
            DeleteNodes([bn_id]).run(d, tx)
            tx.apply(ReplaceItem(node_target(conv_id), "input", 1, wn))
            if len(conv.input) > 2:
                tx.apply(ReplaceItem(node_target(conv_id), "input", 2, bn_name))
            else:
                tx.apply(InsertItem(node_target(conv_id), "input", 2, bn_name))
            tx.apply(ReplaceItem(node_target(conv_id), "output", 0, out))

    return plan_from("Fuse BatchNormalization into Conv", changes, apply)


def _rank(doc: Document, sid: ScopeId, name: str) -> int | None:
    tp = value_type(doc, sid, name)
    if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
        return None
    return len(tp.tensor_type.shape.dim)


def plan_fuse_matmul_add(doc: Document, scope: ScopeId | None = None) -> PassPlan:
    sid = doc.index.main if scope is None else scope
    s = doc.scope(sid)
    known = _known_values(doc, sid)
    fusions, warnings = [], []
    for nid in s.node_ids:
        mm = doc.node(nid)
        if mm.op_type != "MatMul" or mm.domain not in ("", "ai.onnx") or mm.input[1] not in known:
            continue
        add_id = _single_use(doc, sid, mm.output[0])
        if add_id is None:
            continue
        add = doc.node(add_id)
        if add.op_type != "Add" or add.domain not in ("", "ai.onnx"):
            continue
        other = add.input[1] if add.input[0] == mm.output[0] else add.input[0]
        if other not in known:
            continue
        b_shape = list(known[mm.input[1]].dims)
        c_shape = list(known[other].dims)
        if len(b_shape) != 2 or len(c_shape) > 2 or (c_shape and c_shape[-1] not in (1, b_shape[1])):
            continue
        if _rank(doc, sid, mm.input[0]) != 2:
            warnings.append(f"kept MatMul {mm.name!r}: its input {mm.input[0]!r} is not known to be 2-D")
            continue
        fusions.append((nid, add_id, other, add.output[0]))
    changes = [f"fuse MatMul {doc.node(m).name!r} + Add {doc.node(a).name!r} into Gemm" for m, a, *_ in fusions]

    def apply(d: Document, tx: Transaction) -> None:
        from editor.commands import AddNode

        for mm_id, add_id, bias, out in fusions:
            mm = d.node(mm_id)
            a, b, name = mm.input[0], mm.input[1], mm.name
            # the Gemm takes the Add's place (after every producer of the bias)
            pos = d.scope(sid).position(add_id) - (1 if d.scope(sid).position(mm_id) < d.scope(sid).position(add_id) else 0)
            DeleteNodes([mm_id, add_id]).run(d, tx)
            AddNode(sid, "Gemm", name=(name or "") + ("_gemm" if name else ""), inputs=[a, b, bias],
                    outputs=[out], position=pos).run(d, tx)

    return plan_from("Fuse MatMul + Add into Gemm", changes, apply, warnings)
