"""The one function that decides a run's inputs, and the record that states them.

``run``, ``compare``, ``reduce``, the fp16 check, quantize's calibration and the window's
Run and Compare docks all need the same thing: a value for every graph input, sized so the
model is exercised (:mod:`editor.runtime.input_dims`), valued so it means something
(:mod:`editor.runtime.input_roles`), and *said*: shapes, value ranges, which dims were
guessed and why. :func:`plan_inputs` is that function; its :class:`InputPlan` carries the
values (``feeds``) and their description (``lines()`` for text, ``to_json()``).

Stable call (other modules and the Run dock rely on it); ``given`` fixes some inputs' values,
``dims`` some dim params' sizes, ``val_ranges`` some inputs' value ranges::

    from editor.runtime.input_plan import plan_inputs
    model = doc.model
    first = model.graph.input[0].name
    plan = plan_inputs(model, given={}, dims={"batch": 1}, seed=0,
                       val_ranges={first: (0, 100)}, mode="random")
    plan.feeds      # name -> value, in input order
    plan.inputs     # one InputUse per input: shape, dtype, range, how it was made
    plan.dims       # DimPlan: every open dim's value, role, source, why
    plan.warnings() # guessed non-batch dims, shapes the engine finds broken, given values
                    # whose shape contradicts the declaration
    plan.lines()    # the text the CLI prints; plan.to_json() the "inputs" of --json

When a run at the chosen sizes fails (a VAD that only takes 256 to 640 samples, which no
static check sees through its If branches), :func:`refit` tries other sizes for the guessed
dims by running the model, and says which size failed and why.

``mode``: 'random' (role-aware), 'zeros', 'ones'. ``given`` values are used as they are
(their shapes fix the dims they fill, so a given ``input_ids [1, 37]`` makes the
generated ``attention_mask`` 37 long); names the model does not have are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from editor.errors import RuntimeBackendError
from editor.runtime import kv_cache
from editor.runtime.input_dims import DimChoice, DimPlan, choose_dims
from editor.runtime.input_roles import InputRole
from editor.runtime.values import Value

__all__ = ["InputPlan", "InputUse", "plan_inputs", "refit"]


@dataclass
class InputUse:
    """One input as fed: its shape, element type, value range and how it was made."""

    name: str
    #: the declared type, e.g. ``tensor(float)[N,3,?,?]``
    declared: str
    dtype: str | None
    shape: list[int] | None
    low: float | None
    high: float | None
    #: "given", "random: standard normal", "random in [0, 29]: indices into 'emb' ..."
    how: str

    def text(self) -> str:
        shape = "" if self.shape is None else "[" + ", ".join(map(str, self.shape)) + "]"
        span = "" if self.low is None else f" in [{_g(self.low)}, {_g(self.high)}]"
        return f"{self.name}: {self.dtype or 'value'}{shape}{span} ({self.how})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "declared": self.declared, "dtype": self.dtype, "shape": self.shape,
                "min": self.low, "max": self.high, "how": self.how}


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


@dataclass
class InputPlan:
    """Inputs for one run and what they are (module docstring)."""

    feeds: dict[str, Value]
    inputs: list[InputUse]
    dims: DimPlan
    seed: int | None = 0
    mode: str = "random"
    #: given values whose shapes contradict the model's declaration, one line each
    notes: list[str] = field(default_factory=list)
    #: what :func:`plan_inputs` was called with (a refit makes the plan again with other sizes)
    request: dict[str, Any] = field(default_factory=dict, repr=False)

    def warnings(self, *, fix: str = "give --dim NAME=VALUE") -> list[str]:
        """The dims' warnings (``fix``: how to choose another size) and the plan's notes."""
        return self.dims.warnings(fix=fix) + self.notes

    def lines(self) -> list[str]:
        """The inputs, their open dims and the warnings, one line each (``run``, ``compare``
        and ``reduce`` print these)."""
        head = f"inputs ({self.mode}, seed {self.seed})" if self.mode == "random" else f"inputs ({self.mode})"
        out = [head + ":"] + [f"  {u.text()}" for u in self.inputs]
        for c in self.dims.choices.values():
            tag = "guessed" if c.guessed else c.source
            out.append(f"  dim {c.key} = {c.value}: {c.role}, {tag} ({c.why})")
        out += [f"warning: {w}" for w in self.warnings()]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "mode": self.mode, "inputs": [u.to_json() for u in self.inputs],
                "dims": [c.to_json() for c in self.dims.choices.values()],
                "guessed_dims": {c.key: c.value for c in self.dims.guessed()},
                "warnings": self.warnings()}


def _range(value: Value) -> tuple[float | None, float | None]:
    """Finite min and max of a numeric tensor (None for other values or no finite element)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiubV" or not value.size:
        return None, None
    x = value.astype(np.float64) if value.dtype.kind in "bV" else value
    if x.dtype.kind == "f":
        finite = x[np.isfinite(x)]
        if not finite.size:
            return None, None
        return float(finite.min()), float(finite.max())
    return float(x.min()), float(x.max())


def _how(mode: str, dtype: np.dtype, role: InputRole | None) -> str:
    if mode != "random":
        return mode
    if role is not None:
        kind = f"one of {list(role.choices)[:6]}" if role.choices else "uniform"
        return f"random, {kind}: {role.reason}" if role.reason else f"random, {kind}"
    if dtype.kind == "f" or dtype.kind == "V":
        return "random, standard normal"
    if dtype == np.bool_:
        return "random, fair coin"
    if dtype.kind in "OUS":
        return "random words"
    return "random ints in [-10, 10]" if dtype.kind == "i" else "random ints in [0, 10]"


def _shape_note(name: str, value: Value, declared: tuple[int | str | None, ...] | None) -> str:
    if not isinstance(value, np.ndarray) or declared is None:
        return ""
    if value.ndim != len(declared):
        return f"given {name!r} has rank {value.ndim} {list(value.shape)}; the model declares rank {len(declared)}"
    for axis, (have, want) in enumerate(zip(value.shape, declared)):
        if isinstance(want, int) and want >= 0 and have != want:
            return (f"given {name!r} is {list(value.shape)}; the model declares {want} on axis {axis}: "
                    "onnxruntime will refuse it")
    return ""


def plan_inputs(
    model: onnx.ModelProto,
    *,
    given: Mapping[str, Value] | None = None,
    dims: Mapping[str, int] | None = None,
    seed: int | None = 0,
    val_ranges: Mapping[str, tuple[float, float]] | None = None,
    mode: str = "random",
) -> InputPlan:
    """Every input of ``model``: the ``given`` ones as they are, the others made (module
    docstring). Raises :class:`RuntimeBackendError` for a given or ranged name the model
    does not have, and for an input that cannot be generated (a map)."""
    from editor.runtime.input_roles import input_roles
    from editor.runtime.inputs import InputSpec, input_specs, make_input

    given = dict(given or {})
    specs = input_specs(model)
    names = [s.name for s in specs]
    for what, keys in (("--input", given), ("--val-range", val_ranges or {})):
        unknown = [k for k in keys if k not in names]
        if unknown:
            raise RuntimeBackendError(
                f"{what} {unknown[0]!r}: the model has no such input (inputs: {', '.join(names) or 'none'})")
    shapes = {k: tuple(v.shape) for k, v in given.items() if isinstance(v, np.ndarray)}
    dim_plan = choose_dims(model, dims, given_shapes=shapes)
    cache = kv_cache.settle(model, dim_plan, dims)  # a decoder: total = past + new, a mask to match
    values = dim_plan.values()
    roles = input_roles(model, values) if mode == "random" else {}
    for name, (lo, hi) in (val_ranges or {}).items():
        roles[name] = InputRole(low=lo, high=hi, reason="user range")
    feeds: dict[str, Value] = {}
    uses: list[InputUse] = []
    notes: list[str] = []
    for i, spec in enumerate(specs):
        if spec.name in given:
            value = given[spec.name]
            how = "given"
            note = _shape_note(spec.name, value, spec.shape)
            if note:
                notes.append(note)
        elif cache is not None and mode == "random" and spec.name in cache.fills and spec.name not in (val_ranges or {}):
            value = cache.value(spec.name, dim_plan.shape(spec.name, spec.shape), spec.dtype)
            how = cache.how(spec.name)
        else:
            shaped = spec if spec.shape is None else InputSpec(spec.name, spec.type, spec.kind, spec.elem_type,
                                                               dim_plan.shape(spec.name, spec.shape))
            value = make_input(shaped, mode, dims=values, seed=None if seed is None else seed + i,
                               role=roles.get(spec.name))
            how = _how(mode, spec.dtype, roles.get(spec.name))
        feeds[spec.name] = value
        tensor = value[0] if isinstance(value, list) and value else value
        low, high = _range(tensor)
        uses.append(InputUse(spec.name, spec.type_text, str(tensor.dtype) if isinstance(tensor, np.ndarray) else None,
                             list(tensor.shape) if isinstance(tensor, np.ndarray) else None, low, high, how))
    return InputPlan(feeds, uses, dim_plan, seed, mode, notes,
                     request={"given": given, "dims": dict(dims or {}), "seed": seed, "val_ranges": val_ranges,
                              "mode": mode})


def _gist(error: str, limit: int = 160) -> str:
    """The telling part of a backend's error: onnxruntime's innermost "Status Message"."""
    text = error.rsplit("Status Message: ", 1)[-1].strip()
    text = text.split(" (--allow-fallback", 1)[0]
    return text if len(text) <= limit else text[:limit - 3] + "..."


#: sizes a refit tries for each role, in order (after the run at the chosen sizes failed)
_LADDERS = {"spatial": (320, 128, 640, 64, 32, 512, 96), "sequence": (8, 32, 64, 128, 4, 256),
            "samples": (4096, 1024, 512, 256, 48000, 160000), "other": (2, 4, 16, 64)}
_FAMILY = {"height": "spatial", "width": "spatial", "depth": "spatial", "sequence": "sequence",
           "samples": "samples", "other": "other"}


def refit(model: onnx.ModelProto, plan: InputPlan, error: str,
          try_run: Callable[[Mapping[str, Value]], str | None], *, max_runs: int = 8) -> InputPlan | None:
    """The run at ``plan``'s sizes failed with ``error``: try other sizes for its guessed
    non-batch dims (each family of roles together: an image's height and width move as one,
    sizes the shape engine objects to skipped), ``try_run(feeds)`` giving the error of a run
    or None. The first plan that runs, its dims saying which size failed and why; None when
    no size tried runs (at most ``max_runs`` runs), or nothing was guessed."""
    from editor.runtime.input_dims import _Checker

    families: dict[str, list[str]] = {}
    for c in plan.dims.guessed():
        families.setdefault(_FAMILY[c.role], []).append(c.key)
    if not families:
        return None
    checker = _Checker(model, plan.dims.keys)
    searched = {k for keys in families.values() for k in keys}
    base = {k: c.value for k, c in plan.dims.choices.items()}
    runs = 0
    for family, keys in families.items():
        for size in _LADDERS[family]:
            trial = {**base, **{k: size for k in keys}}
            if trial == base or checker.problems(trial, searched, limit=1):
                continue
            if runs >= max_runs:
                return None
            runs += 1
            request = dict(plan.request)
            request["dims"] = {**request["dims"], **{k: size for k in keys}}
            again = plan_inputs(model, **request)
            if try_run(again.feeds) is not None:
                continue
            first = _gist(error)
            for k in keys:
                c = again.dims.choices[k]
                again.dims.choices[k] = DimChoice(k, c.value, "guess", plan.dims.choices[k].role,
                                                  f"{plan.dims.choices[k].why}; {size}, not {base[k]}: at {base[k]} "
                                                  f"the run failed ({first})", c.uses)
            again.request = plan.request
            return again
    return None
