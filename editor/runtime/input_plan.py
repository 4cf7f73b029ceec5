"""What a run's generated inputs will be, and why, before any value is made.

:func:`~editor.runtime.inputs.make_inputs` (``onnx-studio run --random``, compare, reduce)
makes the values; the Run dock shows the same choices beside its editors and lets the user
override them. :func:`plan_inputs` states those choices with their reasons, from the very
functions ``make_inputs`` calls (:func:`~editor.runtime.inputs.model_dims` for the dims,
:func:`~editor.runtime.input_roles.input_roles` for what each input feeds), so the window
cannot drift from the command line: the dock's random values themselves come from
``make_inputs``.

NOTE: the dock once had its own copy of these choices. Every int64 input got -10..10, so a
MiniLM encoder failed on the first F5 (token_type_ids out of range) while ``run --random``
picked input_ids in 0..30521 and token types 0..1; a detector got 224x224 where its
``imgsz`` metadata (and the CLI) said 320.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import onnx

from editor.runtime.input_roles import InputRole, input_roles
from editor.runtime.inputs import (
    _BATCH,
    _SEQ,
    _SPATIAL,
    InputSpec,
    _spec_dims,
    input_specs,
    metadata_dims,
    model_dims,
)

__all__ = ["DimChoice", "InputChoice", "InputPlan", "dim_key", "guess_reason", "plan_inputs", "value_range"]

#: where a dim's value comes from
USER, METADATA, GUESS = "user", "metadata", "guess"


@dataclass(frozen=True)
class DimChoice:
    """The value a symbolic (or unknown) dim gets, and why."""

    value: int
    source: str  # USER, METADATA or GUESS
    why: str


@dataclass(frozen=True)
class InputChoice:
    """What the random value of one input will be."""

    name: str
    #: concrete shape (None for an unranked or non-tensor input)
    shape: tuple[int, ...] | None
    #: the values drawn, in words ("ints in [0, 30521]", "standard normal")
    values: str
    #: why those values ("indices into 'word_embeddings' (30522 along axis)", "the default for int64")
    why: str
    role: InputRole | None = None


@dataclass
class InputPlan:
    """Dims (by the key the Run dock and ``model_dims`` use) and inputs (by name)."""

    dims: dict[str, DimChoice] = field(default_factory=dict)
    inputs: dict[str, InputChoice] = field(default_factory=dict)

    def dim_values(self) -> dict[str, int]:
        return {k: c.value for k, c in self.dims.items()}


def dim_key(spec_name: str, axis: int, dim: int | str | None) -> str | None:
    """The key of one declared dim: its name, ``input[axis]`` for an unnamed or negative
    one (what ``model_dims`` and ``--dim`` use), None for a fixed size."""
    if isinstance(dim, int) and dim >= 0:
        return None
    if isinstance(dim, str) and dim:
        return dim
    return f"{spec_name}[{axis}]"


def guess_reason(name: str | None) -> str:
    """Why :func:`~editor.runtime.inputs.guess_dim` gives ``name`` its value."""
    if not name or _BATCH.match(name) or "batch" in name.lower():
        return "guessed: a batch dim gets 1" if name else "guessed: an unnamed dim gets 1"
    if _SPATIAL.match(name):
        return "guessed: an image side gets 224 (the model's metadata names no size)"
    if _SEQ.search(name):
        return "guessed: a sequence length gets 16"
    return "guessed: a dim with no known meaning gets 1"


def value_range(dtype: np.dtype, role: InputRole | None) -> tuple[float, float] | None:
    """The [low, high] random values of ``dtype`` lie in (None: no bounded range, as the
    standard normal of floats, strings and bools).

    NOTE: mirrors :func:`~editor.runtime.inputs.random_tensor` (and its role branch);
    ``tests/editor/test_input_plan.py`` draws values and checks them against this."""
    dtype = np.dtype(dtype)
    if role is not None and dtype.kind in "fiub":
        if role.choices:
            picked = np.asarray(role.choices).astype(dtype).astype(np.float64)
            return float(picked.min()), float(picked.max())
        low = role.low if role.low is not None else (-10 if dtype.kind in "if" else 0)
        high = role.high if role.high is not None else max(low, 10)
        if dtype.kind in "ub":
            low = max(low, 0)
        if dtype.kind == "b":  # any nonzero is true
            low, high = min(low, 1), min(high, 1)
        return float(low), float(max(high, low))
    if dtype.kind == "i":
        return -10.0, 10.0
    if dtype.kind == "u":
        return 0.0, 10.0
    return None


def _values_text(dtype: np.dtype, role: InputRole | None) -> str:
    dtype = np.dtype(dtype)
    if role is not None and role.choices and dtype.kind in "fiub":
        shown = ", ".join(f"{c:g}" for c in role.choices[:6]) + (", …" if len(role.choices) > 6 else "")
        return f"one of {shown}"
    rng = value_range(dtype, role)
    if rng is not None:
        kind = "floats" if dtype.kind == "f" else "ints"
        return f"{kind} in [{rng[0]:g}, {rng[1]:g}]"
    if dtype == np.bool_:
        return "true or false"
    if dtype.kind in "OUS":
        return "short words"
    if dtype.kind == "c":
        return "complex standard normal"
    return "standard normal"


def plan_inputs(model: onnx.ModelProto, dims: Mapping[str, int] | None = None,
                val_ranges: Mapping[str, tuple[float, float]] | None = None) -> InputPlan:
    """The dims and random values ``make_inputs(model, "random", dims=dims,
    val_ranges=val_ranges)`` will use, each with its reason."""
    user = dict(dims or {})
    all_dims = model_dims(model, user)
    meta = metadata_dims(model)
    meta_key = next((p.key for p in model.metadata_props
                     if p.key.lower() in ("imgsz", "image_size", "img_size", "input_size")), "")
    plan = InputPlan()
    specs = input_specs(model)
    for spec in specs:
        if spec.shape is None:
            continue
        values = _spec_dims(spec, all_dims)
        for axis, d in enumerate(spec.shape):
            key = dim_key(spec.name, axis, d)
            if key is None or key in plan.dims:
                continue
            value = int(values[axis])
            if key in user:
                plan.dims[key] = DimChoice(value, USER, "your value")
            elif meta and key in all_dims:
                plan.dims[key] = DimChoice(value, METADATA, f"the model's metadata: {meta_key}")
            else:
                plan.dims[key] = DimChoice(value, GUESS, guess_reason(d if isinstance(d, str) else None))
    roles = input_roles(model, all_dims)
    for name, (lo, hi) in (val_ranges or {}).items():
        roles[name] = InputRole(low=lo, high=hi, reason="your range")
    for spec in specs:
        plan.inputs[spec.name] = _choice(spec, all_dims, roles.get(spec.name))
    return plan


def _choice(spec: InputSpec, all_dims: dict[str, int], role: InputRole | None) -> InputChoice:
    shape = _spec_dims(spec, all_dims) if spec.shape is not None and spec.kind == "tensor" else None
    dtype = spec.dtype
    if spec.kind == "map":
        return InputChoice(spec.name, None, "no value", f"a {spec.type_text} needs a file")
    why = role.reason if role is not None and role.reason else f"the default for {dtype.name}"
    return InputChoice(spec.name, shape, _values_text(dtype, role), why, role)
