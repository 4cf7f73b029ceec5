"""Evaluate a node on small known values, so shape arithmetic survives any op chain.

Exporters compute pads, target shapes and axes with whatever ops they like (a Slice with a
negative step, a Transpose of a 2x2 pads table, a ConstantOfShape of zeros). When every
input of a node is a small tensor whose elements are all known numbers, the engine runs
the node with the ONNX reference implementation of its op (one op, not a session: ~0.1 ms)
and keeps the result's value, so the Pad or Reshape that reads it gets a definite shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import onnx

if TYPE_CHECKING:
    from editor.shapes.engine import ValueShape

__all__ = ["fold_small"]

#: largest tensor (elements) evaluated or kept as a value
LIMIT = 64

_RUN_PARAMS = {"log": lambda *a: None, "verbose": 0, "new_ops": None, "existing_functions": {},
               "evaluator_cls": None}


def _array(vs: ValueShape) -> np.ndarray | None:
    if vs.value is None or vs.dims is None or not all(isinstance(d, int) for d in vs.dims):
        return None
    if not all(isinstance(v, (int, float)) for v in vs.value):
        return None
    n = 1
    for d in vs.dims:
        n *= int(d)
    if n != len(vs.value):
        return None
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(vs.elem_type)
    except (KeyError, ValueError, TypeError):
        return None
    return np.array(vs.value, dtype=dtype).reshape([int(d) for d in vs.dims])


def fold_small(node: onnx.NodeProto, inputs: list[ValueShape], opsets: Mapping[str, int]) -> list[ValueShape] | None:
    """The node's outputs computed from its inputs' known values, or None."""
    from editor.shapes.engine import ValueShape

    if (node.domain or "") not in ("", "ai.onnx") or not node.input or any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    arrays = []
    for name, vs in zip(node.input, inputs):
        if not name:
            arrays.append(None)
            continue
        a = _array(vs)
        if a is None or a.size > LIMIT:
            return None
        arrays.append(a)
    try:
        from onnx.reference.ops import load_op

        op = load_op("", node.op_type, opsets.get("", 1))(node, {**_RUN_PARAMS, "opsets": dict(opsets)})
        results = op.run(*arrays)
    except Exception:  # noqa: BLE001 - an op the reference cannot run on these values: no value
        return None
    outs = []
    for r in results if isinstance(results, (tuple, list)) else (results,):
        r = np.asarray(r)
        try:
            elem = onnx.helper.np_dtype_to_tensor_dtype(r.dtype)
        except (KeyError, ValueError, TypeError):
            return None
        value = None
        if r.size <= LIMIT and r.dtype.kind in "iub":
            value = tuple(int(v) for v in r.reshape(-1))
        elif r.size <= 8 and r.dtype.kind == "f":
            value = tuple(float(v) for v in r.reshape(-1))
        outs.append(ValueShape(elem, tuple(int(d) for d in r.shape), value))
    return outs
