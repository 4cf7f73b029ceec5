"""Known shapes for the optimizer: onnx shape inference over a copy, read back per value.

Folding ``Shape`` needs each value's dims. ``onnx.shape_inference`` gives them for most
graphs (main graph and bodies); where a dim is symbolic it keeps the symbol, and two values
with the same symbol have the same size at run time — that lets the torch reshape chains
fold even with a dynamic batch (see :mod:`editor.passes.folding`).

``fix_input_shapes`` is the ``--input-shape`` override: it pins graph inputs to given dims
before anything is inferred, so a dynamic model folds for one fixed shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from editor.errors import StudioError
from editor.passes.graphview import subgraphs

#: a dim: a size, a symbol shared by equal dims, or unknown
Dim = int | str | None


class ShapeOverrideError(StudioError):
    """An --input-shape that names no input or has the wrong rank."""

    exit_code = 2


def fix_input_shapes(model: onnx.ModelProto, shapes: Mapping[str, Sequence[int]]) -> list[str]:
    """Pin main-graph inputs to ``shapes``; returns one line per input changed."""
    by_name = {vi.name: vi for vi in model.graph.input}
    done = []
    for name, dims in shapes.items():
        vi = by_name.get(name)
        if vi is None:
            raise ShapeOverrideError(f"--input-shape names {name!r}, which is not an input "
                                     f"(inputs: {', '.join(by_name) or 'none'})")
        if not vi.type.HasField("tensor_type"):
            raise ShapeOverrideError(f"input {name!r} is not a tensor")
        shape = vi.type.tensor_type.shape
        if vi.type.tensor_type.HasField("shape") and len(shape.dim) != len(dims):
            raise ShapeOverrideError(f"input {name!r} has rank {len(shape.dim)}, --input-shape gives {len(dims)} dims")
        if any(d < 0 for d in dims):
            raise ShapeOverrideError(f"--input-shape {name}: dims must be sizes (>= 0), got {list(dims)}")
        del shape.dim[:]
        for d in dims:
            shape.dim.add().dim_value = int(d)
        done.append(f"input {name!r} pinned to {list(dims)}")
    return done


def _light_copy(model: onnx.ModelProto, keep_bytes: int = 1 << 16) -> onnx.ModelProto:
    """A copy for inference without large weights (their dims and types are what counts)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if len(t.raw_data) > keep_bytes or t.data_location == onnx.TensorProto.EXTERNAL:
            # make it an inline all-zero tensor of the same dims: inference reads dims only,
            # data propagation reads small int tensors, which stay
            del t.external_data[:]
            t.data_location = onnx.TensorProto.DEFAULT
            t.raw_data = b""
            t.ClearField("raw_data")
    return m


def infer_dims(model: onnx.ModelProto) -> dict[str, tuple[int, list[Dim] | None]]:
    """name -> (element type, dims or None when the rank is unknown), every graph."""
    try:
        inferred = onnx.shape_inference.infer_shapes(_light_copy(model), data_prop=True)
    except Exception:  # noqa: BLE001 - no inference: fold what needs no shapes
        inferred = model
    found: dict[str, tuple[int, list[Dim] | None]] = {}
    _collect(inferred.graph, found)
    return found


def _collect(g: onnx.GraphProto, found: dict) -> None:
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        dims: list[Dim] | None = None
        if tt.HasField("shape"):
            dims = []
            for d in tt.shape.dim:
                if d.HasField("dim_value") and d.dim_value >= 0:
                    dims.append(int(d.dim_value))
                elif d.HasField("dim_param") and d.dim_param:
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
        found[vi.name] = (tt.elem_type, dims)
    for t in g.initializer:
        found[t.name] = (t.data_type, list(t.dims))
    for n in g.node:
        for sub in subgraphs(n):
            _collect(sub, found)
