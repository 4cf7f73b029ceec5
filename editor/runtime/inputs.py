"""Input values for a run, without Qt: describe a model's inputs and make values for them.

``input_specs(model)`` lists the graph inputs that need a value (initializers that are also
listed as inputs, IR < 4 style, are left out: they have a default). ``resolve_shape`` turns a
declared shape with symbolic dims into concrete ints, and ``make_input`` fills it: random
(a sensible range per dtype), zeros, ones, a constant, or a file (``.npy``, ``.npz``, or a
serialized ``TensorProto`` / ``SequenceProto`` ... ``.pb``).

NOTE: the sizes of open dims for a whole model are chosen by
:func:`editor.runtime.input_dims.choose_dims` (names, where a dim sits, metadata, and the
shape engine's check), and :func:`editor.runtime.input_plan.plan_inputs` is the one function
that makes a run's inputs and says what they are; :func:`make_inputs` is its values alone.
:func:`guess_dim` here is the name-only first guess for one dim, out of context.

NOTE: random values follow what an input feeds (:mod:`editor.runtime.input_roles`): Gather
indices stay inside the data they index, lengths and counts are non-negative, an input
compared with constants takes one of those constants. ``val_ranges`` (``--val-range``) win
over all of that. :func:`save_inputs` writes what a run used, so it can be repeated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import onnx

from editor.errors import RuntimeBackendError, StudioError
from editor.runtime.input_roles import InputRole
from editor.runtime.values import (
    Value,
    describe_type,
    load_value_proto,
    numpy_dtype_for,
    type_kind,
)

__all__ = [
    "InputSpec",
    "cast_to_declared",
    "guess_dim",
    "input_specs",
    "load_input_file",
    "load_inputs",
    "make_input",
    "make_inputs",
    "random_tensor",
    "resolve_shape",
    "save_inputs",
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
        """The numpy dtype of a value for this input (float32 when the type is unknown or
        one ONNX does not define: a run then says so; an editor still shows defaults)."""
        if not self.elem_type:
            return np.dtype(np.float32)
        try:
            return numpy_dtype_for(self.elem_type)
        except StudioError:
            return np.dtype(np.float32)

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


def random_tensor(
    shape: tuple[int, ...], dtype: np.dtype, *, seed: int | None = 0, role: InputRole | None = None
) -> np.ndarray:
    """Random values in a range that suits the dtype, or the input's ``role``.

    floats: standard normal (what most networks expect after normalisation);
    signed ints: [-10, 10]; unsigned ints: [0, 10] (small, so they are valid indices or
    counts for many ops); bool: fair coin; strings: short words. A ``role`` (what the input
    feeds, or a user range) replaces these: a set of values to pick from, or [low, high]
    (inclusive for integers, uniform for floats).
    """
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if role is not None and dtype.kind in "fiub":
        return _role_values(rng, shape, dtype, role)
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


def _role_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, role: InputRole) -> np.ndarray:
    if role.choices:
        pick = np.asarray(role.choices)
        return np.asarray(pick[rng.integers(0, len(pick), size=shape)]).astype(dtype)
    low = role.low if role.low is not None else (-10 if dtype.kind in "if" else 0)
    high = role.high if role.high is not None else max(low, 10)
    if dtype.kind == "f":
        return np.asarray(rng.uniform(low, high, size=shape)).astype(dtype)
    lo, hi = int(np.ceil(low)), int(np.floor(high))
    if dtype.kind in "ub":
        lo = max(lo, 0)
    if dtype.kind == "b":
        hi = min(hi, 1)
    hi = max(hi, lo)
    return np.asarray(rng.integers(lo, hi + 1, size=shape)).astype(dtype)


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
    role: InputRole | None = None,
) -> Value:
    """A value for ``spec``. ``mode``: 'random', 'zeros', 'ones', 'constant' or 'file'.
    ``role``: what the random values must respect (see :func:`input_roles`).

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
        tensor = random_tensor(shape, dtype, seed=seed, role=role)
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
    val_ranges: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Value]:
    """One value per input of ``model``: :func:`editor.runtime.input_plan.plan_inputs`'s
    feeds (use that to also know what they are: shapes, ranges, guessed dims)."""
    from editor.runtime.input_plan import plan_inputs

    return plan_inputs(model, dims=dims, seed=seed, val_ranges=val_ranges, mode=mode).feeds


def save_inputs(path: str | Path, feeds: Mapping[str, Value]) -> Path:
    """Write the tensors of ``feeds`` to one ``.npz`` (strings as unicode, no pickle), so a
    run can be repeated with ``--input`` / :func:`load_inputs`. Non-tensor values (sequences,
    maps) are left out: ``.npz`` holds arrays only."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name, value in feeds.items():
        if isinstance(value, np.ndarray):
            arrays[name] = value.astype(str) if value.dtype.kind == "O" else value
    with open(p, "wb") as fh:  # np.savez on a path would append ".npz" to other suffixes
        np.savez(fh, **arrays)
    return p


def load_inputs(path: str | Path, model: onnx.ModelProto | None = None) -> dict[str, Value]:
    """Every array of an ``.npz`` written by :func:`save_inputs` (checked against the
    model's inputs when given: dtype, and no unknown names)."""
    p = Path(path)
    if not p.is_file():
        raise RuntimeBackendError(f"inputs file not found: {str(p)!r}")
    try:
        with np.load(p, allow_pickle=False) as archive:
            feeds: dict[str, Value] = {k: archive[k] for k in archive.keys()}
    except Exception as exc:  # corrupt archive: numpy / zipfile errors vary
        raise RuntimeBackendError(f"cannot read inputs file {str(p)!r}: {exc}") from exc
    if model is not None:
        specs = {s.name: s for s in input_specs(model)}
        for name in list(feeds):
            if name not in specs:
                raise RuntimeBackendError(f"{str(p)!r} holds {name!r}, which is not an input of the model")
            value = feeds[name]
            if isinstance(value, np.ndarray) and value.dtype.kind in "US":
                feeds[name] = value.astype(object)
    return feeds


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


def _float_like(dtype: np.dtype) -> bool:
    """float16/32/64 and the ml_dtypes floats (bfloat16, float8 ...)."""
    if dtype.kind == "f":
        return True
    if dtype.kind != "V":
        return False
    import ml_dtypes

    try:
        ml_dtypes.finfo(dtype)
        return True
    except (ValueError, TypeError):
        return False


def _cast_value(value: np.ndarray, want: np.dtype, name: str) -> tuple[np.ndarray, bool]:
    """``value`` as ``want`` and whether that changed any value; refuses a cast that would
    change what the values *mean* (fractions to ints, out-of-range ints)."""
    have = value.dtype
    if have.kind in "OUS" or want.kind in "OUS":
        raise RuntimeBackendError(f"input {name!r}: {have} values cannot be cast to {want}")
    if not _float_like(want) and value.size:
        as_float = value.astype(np.float64) if have.kind != "b" else value.astype(np.int64)
        if _float_like(have) and not np.all(np.isfinite(as_float) & (as_float == np.round(as_float))):
            raise RuntimeBackendError(f"input {name!r}: {have} values with fractions cannot be cast to {want}")
        if want.kind == "b":
            lo, hi = 0, 1
        else:
            info = np.iinfo(want)
            lo, hi = int(info.min), int(info.max)
        if float(as_float.min()) < lo or float(as_float.max()) > hi:
            raise RuntimeBackendError(
                f"input {name!r}: values in [{as_float.min():g}, {as_float.max():g}] do not fit {want}")
    cast = value.astype(want)
    if not value.size:
        return cast, False
    if have.kind == "V" or want.kind == "V":
        back = cast.astype(np.float64)
        changed = not np.array_equal(back, value.astype(np.float64), equal_nan=True)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            changed = not np.array_equal(cast.astype(have), value, equal_nan=have.kind == "f")
    return cast, changed


def cast_to_declared(model: onnx.ModelProto, feeds: Mapping[str, Value], *,
                     side: str = "") -> tuple[dict[str, Value], list[str]]:
    """``feeds`` with each tensor in the element type ``model`` declares for that input,
    and one note per cast ("B: input 'x' cast float32 -> float16, values rounded").

    Comparing an fp32 model with its fp16 version feeds both the same values, each in the
    type its side declares; a cast that would change what values mean (fractions or
    out-of-range numbers to an int type) raises :class:`RuntimeBackendError` instead.
    """
    specs = {s.name: s for s in input_specs(model)}
    out: dict[str, Value] = {}
    notes: list[str] = []
    prefix = f"{side}: " if side else ""
    for name, value in feeds.items():
        spec = specs.get(name)
        if spec is None or spec.kind != "tensor" or not spec.elem_type or not isinstance(value, np.ndarray):
            out[name] = value
            continue
        want = spec.dtype
        if value.dtype == want or (want.kind == "O" and value.dtype.kind in "OUS"):
            out[name] = value
            continue
        out[name], changed = _cast_value(value, want, name)
        notes.append(f"{prefix}input {name!r} cast {value.dtype} -> {want} to match {spec.type_text}"
                     + (", values rounded" if changed else ""))
    return out, notes
