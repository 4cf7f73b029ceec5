"""Input values for a run, without Qt: describe a model's inputs and make values for them.

``input_specs(model)`` lists the graph inputs that need a value (initializers that are also
listed as inputs, IR < 4 style, are left out: they have a default). ``resolve_shape`` turns a
declared shape with symbolic dims into concrete ints, and ``make_input`` fills it: random
(a sensible range per dtype), zeros, ones, a constant, or a file (``.npy``, ``.npz``, or a
serialized ``TensorProto`` / ``SequenceProto`` ... ``.pb``).

NOTE: symbolic dimension guesses. A user value always wins (``dims={"batch": 4}``). Without
one, a name that looks like a batch dimension (``batch``, ``N``, ``b``, ``bs``,
``batch_size``, ``unk__…``, ``?``/unnamed, ``-1``) gets 1; sequence-like names
(``seq``, ``sequence``, ``len``, ``length``, ``time``, ``T``, ``tokens``) get 16; spatial
names (``height``, ``width``, ``h``, ``w``) get 224; everything else gets 1. Real models still
need user values sometimes (audio windows, detector strides): the guesses only have to be a
starting point the input panel shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import onnx

from editor.errors import RuntimeBackendError
from editor.runtime.values import (
    Value,
    describe_type,
    load_value_proto,
    numpy_dtype_for,
    type_kind,
)

__all__ = [
    "InputSpec",
    "guess_dim",
    "input_specs",
    "load_input_file",
    "make_input",
    "make_inputs",
    "random_tensor",
    "resolve_shape",
]



@dataclass(frozen=True)
class InputSpec:
    """One graph input that needs a value."""

    name: str
    type: onnx.TypeProto
    #: 'tensor', 'sequence', 'map', 'optional' ...
    kind: str
    #: ONNX elem type of the tensor (of the innermost tensor for containers); 0 if unknown
    elem_type: int
    #: declared dims: int, a symbolic name, or None (unknown); None for an unranked tensor
    shape: tuple[int | str | None, ...] | None

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype_for(self.elem_type) if self.elem_type else np.dtype(np.float32)

    @property
    def type_text(self) -> str:
        return describe_type(self.type)


def _innermost_tensor(tp: onnx.TypeProto) -> onnx.TypeProto.Tensor | None:
    kind = type_kind(tp)
    if kind == "tensor":
        return tp.tensor_type
    if kind == "sequence":
        return _innermost_tensor(tp.sequence_type.elem_type)
    if kind == "optional":
        return _innermost_tensor(tp.optional_type.elem_type)
    return None


def input_specs(model: onnx.ModelProto) -> list[InputSpec]:
    """The inputs of ``model``'s main graph that a run must feed, in declaration order."""
    inits = {i.name for i in model.graph.initializer} | {i.values.name for i in model.graph.sparse_initializer}
    specs = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = _innermost_tensor(vi.type)
        shape: tuple[int | str | None, ...] | None = None
        if tt is not None and tt.HasField("shape"):
            shape = tuple(
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim
            )
        specs.append(
            InputSpec(
                name=vi.name,
                type=vi.type,
                kind=type_kind(vi.type),
                elem_type=tt.elem_type if tt is not None else 0,
                shape=shape,
            )
        )
    return specs


_BATCH = re.compile(r"^(n|b|bs|batch|batch_?size|unk__\d+|\?|dynamic|none)$", re.I)
_SEQ = re.compile(r"(seq|sequence|len|length|time|^t$|tokens?)", re.I)
_SPATIAL = re.compile(r"^(h|w|height|width)$", re.I)


def guess_dim(name: str | None) -> int:
    """A starting value for a symbolic dim (see the module docstring)."""
    if not name:
        return 1
    if _BATCH.match(name) or "batch" in name.lower():
        return 1
    if _SPATIAL.match(name):
        return 224
    if _SEQ.search(name):
        return 16
    return 1


def resolve_shape(
    shape: tuple[int | str | None, ...] | None, dims: Mapping[str, int] | None = None
) -> tuple[int, ...]:
    """Concrete dims: ints kept (a negative int, as some exporters write, becomes a guess),
    names from ``dims`` or :func:`guess_dim`. An unranked shape becomes a scalar ``()``."""
    dims = dims or {}
    if shape is None:
        return ()
    out = []
    for d in shape:
        if isinstance(d, int) and d >= 0:
            out.append(d)
        elif isinstance(d, str) and d in dims:
            out.append(int(dims[d]))
        else:
            out.append(guess_dim(d if isinstance(d, str) else None))
    return tuple(out)


def random_tensor(shape: tuple[int, ...], dtype: np.dtype, *, seed: int | None = 0) -> np.ndarray:
    """Random values in a range that suits the dtype.

    floats: standard normal (what most networks expect after normalisation);
    signed ints: [-10, 10]; unsigned ints: [0, 10] (small, so they are valid indices or
    counts for many ops); bool: fair coin; strings: short words.
    """
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "O" or dtype.kind in "US":
        words = np.array(["alpha", "beta", "gamma", "delta", "epsilon"], dtype=object)
        return words[rng.integers(0, len(words), size=shape)].astype(object)
    if dtype.kind == "i":
        return rng.integers(-10, 11, size=shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 11, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "V":  # ml_dtypes: bfloat16, float8, int4 ...
        import ml_dtypes

        try:
            info = ml_dtypes.iinfo(dtype)
            return rng.integers(max(int(info.min), -4), min(int(info.max), 4) + 1, size=shape).astype(dtype)
        except (ValueError, TypeError):
            return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _fill(shape: tuple[int, ...], dtype: np.dtype, value: Any) -> np.ndarray:
    if np.dtype(dtype).kind == "O":
        arr = np.empty(shape, dtype=object)
        arr[...] = str(value) if value not in (0, 1) else ("" if value == 0 else "1")
        return arr
    return np.full(shape, value).astype(dtype)


def make_input(
    spec: InputSpec,
    mode: str = "random",
    *,
    dims: Mapping[str, int] | None = None,
    constant: Any = 0,
    seed: int | None = 0,
    path: str | Path | None = None,
) -> Value:
    """A value for ``spec``. ``mode``: 'random', 'zeros', 'ones', 'constant' or 'file'.

    Sequence inputs get a one-element list, optionals get their element type's value;
    map inputs cannot be generated and need a file.
    """
    if mode == "file":
        if path is None:
            raise RuntimeBackendError(f"input {spec.name!r}: mode 'file' needs a path")
        return load_input_file(path, spec)
    if spec.kind == "map":
        raise RuntimeBackendError(f"input {spec.name!r} is a {spec.type_text}: give a file for it")
    shape = resolve_shape(spec.shape, dims)
    dtype = spec.dtype
    if mode == "random":
        tensor = random_tensor(shape, dtype, seed=seed)
    elif mode == "zeros":
        tensor = _fill(shape, dtype, 0)
    elif mode == "ones":
        tensor = _fill(shape, dtype, 1)
    elif mode == "constant":
        tensor = _fill(shape, dtype, constant)
    else:
        raise RuntimeBackendError(f"unknown input mode {mode!r} (random, zeros, ones, constant, file)")
    if spec.kind == "sequence" or (
        spec.kind == "optional" and type_kind(spec.type.optional_type.elem_type) == "sequence"
    ):
        return [tensor]
    return tensor


def make_inputs(
    model: onnx.ModelProto,
    mode: str = "random",
    *,
    dims: Mapping[str, int] | None = None,
    seed: int | None = 0,
) -> dict[str, Value]:
    """One value per input of ``model`` (see :func:`make_input`); seeds differ per input."""
    return {
        spec.name: make_input(spec, mode, dims=dims, seed=None if seed is None else seed + i)
        for i, spec in enumerate(input_specs(model))
    }


def load_input_file(path: str | Path, spec: InputSpec | None = None) -> Value:
    """Read a value from ``.npy``, ``.npz`` (the array named like the input, or the only one)
    or ``.pb`` (TensorProto, or the proto kind the input's type says)."""
    p = Path(path)
    if not p.is_file():
        raise RuntimeBackendError(f"input file not found: {str(p)!r}")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            value: Value = np.load(p, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(p, allow_pickle=False) as archive:
                keys = list(archive.keys())
                if spec is not None and spec.name in keys:
                    value = archive[spec.name]
                elif len(keys) == 1:
                    value = archive[keys[0]]
                else:
                    want = spec.name if spec else "?"
                    raise RuntimeBackendError(
                        f"{str(p)!r} holds {keys[:8]}; none is named {want!r}"
                    )
        elif suffix == ".pb":
            value = load_value_proto(p.read_bytes(), spec.type if spec is not None else None)
        else:
            raise RuntimeBackendError(f"unsupported input file type {suffix!r} in {str(p)!r} (.npy, .npz, .pb)")
    except RuntimeBackendError:
        raise
    except Exception as exc:  # corrupt file: numpy/protobuf errors vary
        raise RuntimeBackendError(f"cannot read input file {str(p)!r}: {exc}") from exc
    if spec is not None and isinstance(value, np.ndarray) and spec.elem_type and spec.kind == "tensor":
        want = spec.dtype
        if value.dtype != want and not (want.kind == "O" and value.dtype.kind in "US"):
            raise RuntimeBackendError(
                f"input {spec.name!r} expects {spec.type_text}, file {str(p)!r} holds {value.dtype}"
            )
        if value.dtype.kind in "US":
            value = value.astype(object)
    return value
