"""Change the element type of a graph input or output, with the Cast inside the model.

An input ``x`` declared int64 set to int32: the graph input becomes int32 and a
``Cast(to=int64)`` right after it feeds every former reader, so the rest of the model is
untouched. An output set to a new type: its producer writes a renamed value and a Cast
right after the producer writes the output under its old name.

Refused without ``allow_lossy`` where values would not fit: for an input, when the new
type holds values the model's type cannot (float32 -> int64 input); for an output, when
the model's values may not fit the new type (int64 -> int32, float32 -> float16). The
refusal says which values would be lost, and how to ask for it anyway.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import TensorProto

from editor.commands.common import fresh_name
from editor.document import Command, Document, Transaction
from editor.errors import CommandError
from editor.surgery.merge import _graphs, _value_names

__all__ = ["SetIOTypes", "fits", "parse_dtype", "set_io_types"]

_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "fp16": "float16", "fp32": "float32",
            "bf16": "bfloat16", "long": "int64", "int": "int32"}


def parse_dtype(text: str) -> int:
    """An ONNX element type from a name like ``int32``, ``float16``, ``bf16`` or ``INT32``."""
    key = _ALIASES.get(text.strip().lower(), text.strip().lower())
    for value, name in ((v, n) for n, v in TensorProto.DataType.items()):
        np_name = _np_name(value)
        if key in (name.lower(), np_name) and value != TensorProto.UNDEFINED:
            return value
    raise CommandError(f"unknown element type {text!r} (e.g. float32, float16, bfloat16, int64, int32, bool)")


def _np_name(elem_type: int) -> str:
    if elem_type == TensorProto.BFLOAT16:
        return "bfloat16"
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).name
    except Exception:  # noqa: BLE001 - types numpy has no name for
        return TensorProto.DataType.Name(elem_type).lower()


def fits(src: int, dst: int) -> bool:
    """Whether every value of element type ``src`` is exactly a value of ``dst``."""
    if src == dst or src == TensorProto.BOOL:
        return True
    if TensorProto.BFLOAT16 in (src, dst):
        small = {TensorProto.INT8, TensorProto.UINT8}
        if dst == TensorProto.BFLOAT16:
            return src in small
        return dst in (TensorProto.FLOAT, TensorProto.DOUBLE)
    if src in (TensorProto.STRING,) or dst in (TensorProto.STRING,):
        return False
    try:
        a = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(src))
        b = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(dst))
    except Exception:  # noqa: BLE001 - exotic types: only an identical type fits
        return False
    if a.kind in "iu" and b.kind == "f":  # numpy calls int64 -> float64 safe; 2**53 + 1 is not
        return np.finfo(b).nmant + 1 >= a.itemsize * 8 - (1 if a.kind == "i" else 0)
    return bool(np.can_cast(a, b, "safe"))


def ensure_default_opset(model: onnx.ModelProto, version: int) -> bool:
    """Import the default domain (at ``version``) when Casts are added to a model that only
    imports other domains (an ai.onnx.ml classifier); raises the IR version if it must.
    True when an import was added."""
    if any(o.domain in ("", "ai.onnx") for o in model.opset_import):
        return False
    model.opset_import.append(onnx.helper.make_opsetid("", version))
    model.ir_version = max(model.ir_version, onnx.helper.find_min_ir_version_for(list(model.opset_import)))
    return True


def _elem(vi: onnx.ValueInfoProto) -> int:
    return vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0


def _rename_uses(model: onnx.ModelProto, old: str, new: str) -> None:
    for g in _graphs(model.graph):
        for n in g.node:
            for i, x in enumerate(n.input):
                if x == old:
                    n.input[i] = new


def set_io_types(model: onnx.ModelProto, types: Mapping[str, int], *, allow_lossy: bool = False) -> onnx.ModelProto:
    """A copy of ``model`` whose named graph inputs/outputs have the given element types."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    inits = {t.name for t in g.initializer}
    inputs = {vi.name: vi for vi in g.input if vi.name not in inits}
    outputs = {vi.name: vi for vi in g.output}
    taken = _value_names(out) | {n.name for n in g.node}
    for name, dtype in types.items():
        if name not in inputs and name not in outputs:
            raise CommandError(f"{name!r} is neither an input nor an output of the graph")
        if name in inputs and name in outputs:
            raise CommandError(f"{name!r} is both an input and an output: change it where it is used instead")
        vi = inputs.get(name) or outputs[name]
        old = _elem(vi)
        if not old:
            raise CommandError(f"{name!r} has no declared tensor type to change")
        if old == dtype:
            continue
        src, dst = (dtype, old) if name in inputs else (old, dtype)
        if not fits(src, dst) and not allow_lossy:
            what = "input" if name in inputs else "output"
            raise CommandError(f"{what} {name!r}: {_np_name(src)} values do not all fit in {_np_name(dst)} "
                               "(pass allow_lossy / --allow-lossy to cast anyway)")
        inner = fresh_name(f"{name}_{_np_name(old)}", taken)
        taken.add(inner)
        cast_name = fresh_name(f"Cast_{name}", taken)
        taken.add(cast_name)
        if name in inputs:
            _rename_uses(out, name, inner)
            cast = onnx.helper.make_node("Cast", [name], [inner], to=old, name=cast_name)
            g.node.insert(0, cast)
        else:
            pos = next((k for k, n in enumerate(g.node) if name in n.output), None)
            if pos is None:
                raise CommandError(f"output {name!r} is not computed by a node (it is a weight): cast the weight")
            producer = g.node[pos]
            producer.output[list(producer.output).index(name)] = inner
            _rename_uses(out, name, inner)
            for v in g.value_info:
                if v.name == name:
                    v.name = inner
            g.node.insert(pos + 1, onnx.helper.make_node("Cast", [inner], [name], to=dtype, name=cast_name))
        vi.type.tensor_type.elem_type = dtype
    ensure_default_opset(out, 13)  # Cast-13 knows every element type incl. bfloat16
    return out


class SetIOTypes(Command):
    """Set element types of graph inputs/outputs (``{name: onnx elem type}``) as one step."""

    def __init__(self, types: Mapping[str, int], *, allow_lossy: bool = False) -> None:
        super().__init__()
        self.types, self.allow_lossy = dict(types), allow_lossy
        self.label = "Set type of " + ", ".join(repr(n) for n in self.types)

    def run(self, doc: Document, tx: Transaction) -> None:
        from editor.passes.apply import ApplyModel

        if not self.types:
            raise CommandError("name at least one input or output")
        ApplyModel(set_io_types(doc.model, self.types, allow_lossy=self.allow_lossy), self.label).run(doc, tx)
