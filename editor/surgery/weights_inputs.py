"""Weights <-> graph inputs, one step each.

* :class:`InitializerToInput`: a weight becomes a graph input the caller feeds (LoRA
  weights, a threshold to tune). With ``keep_default`` the initializer stays as the input's
  default value (IR >= 4: an input with an initializer of the same name may be fed or not).
* :class:`InputToInitializer`: freeze an input to a value (an ``np.ndarray``, e.g. loaded
  from ``.npy``); the value must have the input's element type and fit its declared shape.

Models of IR < 4 list every initializer among the inputs; there the input entry stays
(it is what makes an initializer legal) and only the initializer comes or goes.
"""

from __future__ import annotations

import numpy as np
import onnx

from editor.commands.common import describe, require
from editor.document import Command, Document, ScopeId, Transaction
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, scope_target
from editor.io.tensors import NUMPY_DTYPES, numpy_to_tensor

__all__ = ["InitializerToInput", "InputToInitializer"]


def _position(items: object, name: str) -> int | None:
    for k, item in enumerate(items):  # type: ignore[arg-type]
        if item.name == name:
            return k
    return None


class InitializerToInput(Command):
    """Make initializer ``name`` of graph ``scope`` a graph input (optionally keeping the
    initializer as its default value)."""

    def __init__(self, name: str, *, keep_default: bool = False, scope: ScopeId | None = None) -> None:
        super().__init__()
        self.name, self.keep_default, self.scope = name, keep_default, scope
        self.label = f"Make weight {name!r} an input"

    def run(self, doc: Document, tx: Transaction) -> None:
        sid = doc.index.main if self.scope is None else self.scope
        require(sid == doc.index.main, "only the main graph has inputs a caller can feed")
        g = doc.scope(sid).graph
        k = _position(g.initializer, self.name)
        require(k is not None, f"there is no weight {describe(self.name)} in this graph")
        old_ir = doc.model.ir_version < 4
        in_inputs = _position(g.input, self.name) is not None
        require(not (in_inputs and (self.keep_default or not old_ir)),
                f"{describe(self.name)} is already a graph input with this weight as its default")
        require(not (old_ir and self.keep_default), "IR < 4 cannot tell a default from a weight; "
                "make it an input without a default, or convert the model first")
        t = g.initializer[k]
        if not in_inputs:
            vi = onnx.helper.make_tensor_value_info(self.name, t.data_type, list(t.dims))
            tx.apply(InsertItem(scope_target(sid), "input", len(g.input), vi))
        if not self.keep_default:
            tx.apply(RemoveItem(scope_target(sid), "initializer", k))


class InputToInitializer(Command):
    """Freeze graph input ``name`` to ``value`` (it becomes a weight)."""

    def __init__(self, name: str, value: np.ndarray) -> None:
        super().__init__()
        self.name, self.value = name, value
        self.label = f"Freeze input {name!r}"

    def run(self, doc: Document, tx: Transaction) -> None:
        sid = doc.index.main
        g = doc.scope(sid).graph
        pos = _position(g.input, self.name)
        require(pos is not None, f"there is no graph input {describe(self.name)}")
        vi = g.input[pos]
        require(vi.type.HasField("tensor_type"), f"input {describe(self.name)} is not a tensor")
        tt = vi.type.tensor_type
        arr = np.asarray(self.value)
        want = NUMPY_DTYPES.get(tt.elem_type)
        require(want is not None and arr.dtype == want,
                f"input {describe(self.name)} is {want if want is not None else tt.elem_type}, "
                f"the value is {arr.dtype}: convert it first (np.asarray(v, dtype=...))")
        if tt.HasField("shape"):
            dims = list(tt.shape.dim)
            require(len(dims) == arr.ndim, f"input {describe(self.name)} has rank {len(dims)}, the value {arr.ndim}")
            for axis, (d, n) in enumerate(zip(dims, arr.shape)):
                require(not d.HasField("dim_value") or d.dim_value == n,
                        f"input {describe(self.name)}: dimension {axis} is {d.dim_value}, the value's is {n}")
        tensor = numpy_to_tensor(arr, self.name)
        k = _position(g.initializer, self.name)
        if k is not None:  # it had a default value: the frozen value replaces it
            tx.apply(ReplaceItem(scope_target(sid), "initializer", k, tensor))
        else:
            tx.apply(InsertItem(scope_target(sid), "initializer", len(g.initializer), tensor))
        if doc.model.ir_version >= 4:
            tx.apply(RemoveItem(scope_target(sid), "input", pos))
