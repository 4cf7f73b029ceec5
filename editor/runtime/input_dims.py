"""Sizes for the dims a model leaves open, chosen so a run exercises the model, and stated.

A model's input ``x [N, 3, H, W]`` says nothing about H and W. Filling them with 1 runs,
and hides bugs: a flipped Conv dilation in a detector fed a 1x1 image and a +5% weight in a
text recogniser fed a 1-pixel-wide line both "agree". :func:`choose_dims` gives every open
dim a value the model can take, and says for each where it came from:

1. the user (``--dim NAME=V``, ``NAME[AXIS]=V`` for an unnamed dim), or the shape of an
   input the user gave;
2. rules registered with :func:`register_dim_rule` (a KV-cache length ...);
3. the model's metadata (``imgsz`` / ``image_size``: image height and width);
4. a default for the dim's *role*: batch 1, image height/width 224 (or the other side's
   fixed size when that is larger), sequence/time 16, audio samples 16000 — the role
   read from the dim's name (``height``, ``seq_len``, ``batch``) or, for names that say
   nothing (``?``, ``unk__7``, ``p2o.DynamicDimension.1``), from where it sits (axes 2
   and 3 of a 4-D float input are an image's height and width, axis 1 of a 2-D int input
   a token sequence ...);
5. then the shape engine (:mod:`editor.shapes`) checks the choice against the whole graph:
   every size the chosen dims make must be positive, broadcasting operands and Concat
   inputs must agree, a Reshape must keep its element count, a reflect Pad must be
   smaller than its axis. When the defaults break one of these (a stride-32 detector fed
   100 px), the guessed spatial and sequence dims are raised to the smallest multiple of
   a power of two (times 1, 2, 4) that satisfies them all, and the reason says so.

Every guess is marked ``guessed``; callers print a warning for the non-batch ones. A dim
is never 1 for a spatial or sequence role unless the user said so.

NOTE: the engine's check is static; a constraint it cannot see (an op with no shape rule)
still shows up when the model runs, as the backend's own error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import onnx

__all__ = ["DimChoice", "DimPlan", "choose_dims", "dim_key", "metadata_dims", "register_dim_rule"]

#: a role's default size (spatial and sequence dims are never 1 unless a user says so)
ROLE_DEFAULTS = {"batch": 1, "height": 224, "width": 224, "depth": 16, "sequence": 16, "samples": 16000, "other": 1}

_BATCH = re.compile(r"^(bs|batch|batch_?size|num_?batch(es)?)$|batch", re.I)
#: one letter that means the batch only where a batch sits: axis 0 (``waveforms [batch, N]``)
_BATCH_LETTER = re.compile(r"^[nb]$", re.I)
_HEIGHT = re.compile(r"(^|[_\W])(h|height|img_?h|image_?h)([_\W]|$)|height", re.I)
_WIDTH = re.compile(r"(^|[_\W])(w|width|img_?w|image_?w)([_\W]|$)|width", re.I)
_SAMPLES = re.compile(r"samples|audio|wave|signal", re.I)
_SEQ = re.compile(r"(seq|sequence|len|length|time|^t$|tokens?|frames?|steps?)", re.I)
#: names that say nothing about a dim: exporters' placeholders
_MEANINGLESS = re.compile(r"^(\?|-1|none|dynamic|unk__\d+|.*dynamic_?dim(ension)?.*|dim_?\d*|d\d+|s\d+)$", re.I)


@dataclass(frozen=True)
class DimChoice:
    """The value of one open dim and its provenance."""

    key: str
    value: int
    #: 'given' (user or a given input), 'rule', 'metadata', 'guess'
    source: str
    #: 'batch', 'height', 'width', 'depth', 'sequence', 'samples', 'other'
    role: str
    #: one phrase: "image height of 'x' (axis 2), no size in the model"
    why: str
    #: where it is used: "x[2]", ...
    uses: tuple[str, ...] = ()

    @property
    def guessed(self) -> bool:
        return self.source == "guess"

    def text(self) -> str:
        tag = {"guess": "guessed", "given": "given", "rule": "rule", "metadata": "metadata"}[self.source]
        return f"{self.key}={self.value} ({self.role}, {tag}: {self.why})"

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "value": self.value, "source": self.source, "role": self.role, "why": self.why,
                "guessed": self.guessed, "uses": list(self.uses)}


@dataclass
class DimPlan:
    """Values for every open dim of a model's inputs (:func:`choose_dims`)."""

    choices: dict[str, DimChoice] = field(default_factory=dict)
    #: (input name, axis) -> key of ``choices``
    keys: dict[tuple[str, int], str] = field(default_factory=dict)
    #: what the shape engine still finds wrong with these sizes (empty: nothing)
    problems: list[str] = field(default_factory=list)

    def values(self) -> dict[str, int]:
        """key -> value; also ``NAME[AXIS]`` for each use of an open dim."""
        out = {k: c.value for k, c in self.choices.items()}
        for (name, axis), key in self.keys.items():
            out.setdefault(f"{name}[{axis}]", self.choices[key].value)
        return out

    def shape(self, name: str, declared: tuple[int | str | None, ...] | None) -> tuple[int, ...]:
        """The concrete shape of input ``name`` (declared ints kept, open dims chosen)."""
        if declared is None:
            return ()
        return tuple(d if isinstance(d, int) and d >= 0 else self.choices[self.keys[(name, k)]].value
                     for k, d in enumerate(declared))

    def guessed(self, *, batch: bool = False) -> list[DimChoice]:
        """The guessed choices (without the batch ones unless ``batch``)."""
        return [c for c in self.choices.values() if c.guessed and (batch or c.role != "batch")]

    def warnings(self, *, fix: str = "give --dim NAME=VALUE") -> list[str]:
        """One line per thing a user should know: guessed non-batch dims (``fix``: how to
        choose another size, the command line's words by default), remaining problems."""
        out = []
        guessed = self.guessed()
        if guessed:
            out.append("guessed " + ", ".join(f"{c.key}={c.value} ({c.role})" for c in guessed)
                       + f": {fix} where the model needs another size")
        out += [f"the chosen sizes break the model's shapes: {p}" for p in self.problems[:3]]
        return out


#: rules of other modules: (model, open dims (key -> uses)) -> key -> (value, why)
_RULES: list[Callable[[onnx.ModelProto, Mapping[str, tuple[str, ...]]], Mapping[str, tuple[int, str]]]] = []


def register_dim_rule(rule: Callable[[onnx.ModelProto, Mapping[str, tuple[str, ...]]],
                                     Mapping[str, tuple[int, str]]]) -> None:
    """Add a rule that fixes some open dims of a model (a decoder's past-sequence length:
    0 for an empty KV cache). It gets the model and the open dims (key -> uses such as
    ``past_key_values.0.key[2]``) and returns key -> (value, why); a user's value still wins,
    a rule's wins over metadata and guesses."""
    if rule not in _RULES:
        _RULES.append(rule)


def dim_key(input_name: str, axis: int, dim: int | str | None) -> str | None:
    """The key of one declared dim: its name, or ``NAME[AXIS]`` for an unnamed one (also
    ``?``, which exporters write for many different dims); None for a fixed size."""
    if isinstance(dim, int) and dim >= 0:
        return None
    if isinstance(dim, str) and dim and dim != "?":
        return dim
    return f"{input_name}[{axis}]"


def metadata_dims(model: onnx.ModelProto) -> dict[str, int]:
    """Spatial dims the model's metadata states: ``imgsz`` / ``image_size`` / ``input_size``
    (``"640"``, ``"[640, 640]"``, ``"640,480"``: height then width) -> ``{"height": h,
    "width": w}`` (also under ``h``/``H``/``w``/``W``). Empty when the metadata says nothing."""
    props = {p.key.lower(): p.value for p in model.metadata_props}
    for key in ("imgsz", "image_size", "img_size", "input_size"):
        if key not in props:
            continue
        numbers = [int(x) for x in re.findall(r"\d+", props[key])]
        if not numbers or any(n <= 0 or n > 100_000 for n in numbers):
            continue
        h, w = numbers[0], numbers[1] if len(numbers) > 1 else numbers[0]
        return {"height": h, "h": h, "H": h, "width": w, "w": w, "W": w}
    return {}


# ----------------------------------------------------------------------------- roles
@dataclass(frozen=True)
class _Use:
    name: str
    axis: int
    rank: int
    is_float: bool
    shape: tuple[int | str | None, ...]

    @property
    def label(self) -> str:
        return f"{self.name}[{self.axis}]"


def _role(key: str, uses: list[_Use]) -> tuple[str, str]:
    """(role, why) of an open dim from its name, else from where it sits."""
    named = key if "[" not in key and not _MEANINGLESS.match(key) else ""
    first = uses[0]
    where = f"axis {first.axis} of {'float' if first.is_float else 'int'} input {first.name!r} (rank {first.rank})"
    if named:
        if _BATCH.search(named) or (_BATCH_LETTER.match(named) and all(u.axis == 0 for u in uses)):
            return "batch", f"named {named!r}"
        if _HEIGHT.search(named):
            return "height", f"named {named!r}"
        if _WIDTH.search(named):
            return "width", f"named {named!r}"
        signal = first.is_float and first.rank <= 2 and first.axis == first.rank - 1
        if _SAMPLES.search(named):
            return "samples", f"named {named!r}"
        if _SEQ.search(named):
            if signal:
                return "samples", f"named {named!r}, the last axis of a {first.rank}-D float input (a signal)"
            return "sequence", f"named {named!r}"
        if signal and _SAMPLES.search(first.name):
            return "samples", f"the samples of {first.name!r}"
    for u in uses:  # where it sits, the most telling use first
        if u.is_float and u.rank in (4, 5) and u.axis >= 2:
            role = ("height", "width")[u.axis - 2] if u.rank == 4 else ("depth", "height", "width")[u.axis - 2]
            return role, f"image {role}: axis {u.axis} of 4-D float input {u.name!r}" if u.rank == 4 else \
                f"volume {role}: axis {u.axis} of 5-D float input {u.name!r}"
    if first.axis == 0 and first.rank >= 2:
        return "batch", where
    for u in uses:
        if u.is_float and u.rank == 3 and u.axis in (1, 2):
            return "sequence", f"time/sequence: axis {u.axis} of 3-D float input {u.name!r}"
        if not u.is_float and u.rank == 2 and u.axis == 1:
            return "sequence", f"token sequence: axis 1 of 2-D int input {u.name!r}"
        if u.is_float and u.rank <= 2 and u.axis == u.rank - 1:
            return "samples", f"a signal: the last axis of {u.rank}-D float input {u.name!r}"
    return "other", where + ", its role unknown"


def _default(role: str, uses: list[_Use], meta: Mapping[str, int]) -> tuple[int, str, str]:
    """(value, source, why suffix) for a role with nothing given."""
    if role in ("height", "width") and meta:
        return meta[role], "metadata", f"the model's metadata says {meta['height']}x{meta['width']}"
    value = ROLE_DEFAULTS[role]
    if role in ("height", "width"):
        # an image whose other side is fixed (a text line 48 high): at least that size
        other = {"height": 3, "width": 2}[role]
        for u in uses:
            if u.rank == 4 and other < len(u.shape) and isinstance(u.shape[other], int) and u.shape[other] > value:
                return u.shape[other], "guess", f"as large as its fixed {('width', 'height')[other - 2]}"
        return value, "guess", f"{value} by default for an image"
    if role == "other":
        return value, "guess", "nothing says what it is"
    return value, "guess", f"{value} by default for a {role} dim"


# ----------------------------------------------------------------------------- the check
_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less",
              "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "PRelu"}


class _Checker:
    """The shape engine's table of a model, evaluated at candidate sizes."""

    def __init__(self, model: onnx.ModelProto, symbols: Mapping[tuple[str, int], str]) -> None:
        from editor.shapes.engine import ValueShape, infer_graph, shape_of_type
        from editor.shapes.symbolic import symbol

        g = model.graph
        inits = {t.name for t in g.initializer}
        declared = []
        for vi in g.input:
            vs = shape_of_type(vi.type, vi.name)
            if vs.dims is not None and vi.name not in inits:
                vs = ValueShape(vs.elem_type, tuple(symbol(symbols[(vi.name, k)]) if (vi.name, k) in symbols else d
                                                   for k, d in enumerate(vs.dims)), vs.value)
            declared.append(vs)
        opsets = {o.domain or "": o.version for o in model.opset_import}
        try:
            self.table = infer_graph(g, opsets, outer=None, ir_version=model.ir_version, declared_inputs=declared)
        except Exception:  # noqa: BLE001 - the check is a help: without it, the defaults stand
            self.table = None
        self.graph = g

    def problems(self, values: Mapping[str, int], searched: set[str], limit: int = 3) -> list[str]:
        """What is wrong with the graph's shapes at ``values`` (at most ``limit``)."""
        from editor.shapes.symbolic import Expr, free_symbols

        if self.table is None:
            return []
        table = self.table
        found: list[str] = []
        memo: dict[Expr, int | None] = {}  # one formula serves many values: evaluate it once

        def evaluate(d: object, values: Mapping[str, int]) -> int | None:
            if isinstance(d, int) or d is None:
                return d  # type: ignore[return-value]
            if d not in memo:
                from editor.shapes.symbolic import evaluate as ev

                memo[d] = ev(d, values)  # type: ignore[arg-type]
            return memo[d]  # type: ignore[index]

        def dims(name: str) -> list[int | None] | None:
            vs = table.values.get(name)
            if vs is None or vs.dims is None:
                return None
            return [evaluate(d, values) for d in vs.dims]

        for node in self.graph.node:
            if len(found) >= limit:
                break
            label = f"{node.op_type} {node.name or node.output[0]!r}"
            for o in node.output:
                vs = table.values.get(o) if o else None
                if vs is None or vs.dims is None:
                    continue
                for d in vs.dims:
                    v = evaluate(d, values) if d is not None else None
                    if v is not None and (v < 0 or (v == 0 and free_symbols(d) & searched)):
                        found.append(f"{label} makes a size of {v}")
                        break
            ins = [dims(x) if x else None for x in node.input]
            op = node.op_type
            if op in _BROADCAST:
                shapes = [s for s in ins if s is not None]
                if len(shapes) >= 2 and not _broadcastable(shapes):
                    found.append(f"{label} cannot broadcast {' and '.join(_txt(s) for s in shapes)}")
            elif op == "Concat":
                axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                shapes = [s for s in ins if s is not None]
                if len({len(s) for s in shapes}) == 1 and shapes:
                    ax = axis + len(shapes[0]) if axis < 0 else axis
                    for k in range(len(shapes[0])):
                        seen = {s[k] for s in shapes if s[k] is not None}
                        if k != ax and len(seen) > 1:
                            found.append(f"{label} joins {' and '.join(_txt(s) for s in shapes)}")
                            break
            elif op == "MatMul" and len(ins) == 2 and ins[0] and ins[1] and len(ins[0]) >= 2 and len(ins[1]) >= 2:
                a, b = ins[0][-1], ins[1][-2]
                if a is not None and b is not None and a != b:
                    found.append(f"{label} multiplies {_txt(ins[0])} by {_txt(ins[1])}")
            elif op == "Reshape" and ins and ins[0] is not None:
                out = dims(node.output[0])
                if out is not None and None not in out and None not in ins[0] \
                        and int(np.prod(out)) != int(np.prod(ins[0])):
                    found.append(f"{label} cannot reshape {_txt(ins[0])} to {_txt(out)}")
            elif op == "Pad" and ins and ins[0] is not None and _attr_s(node, "mode") == "reflect" and len(node.input) > 1:
                pads = table.values.get(node.input[1])
                if pads is not None and pads.value is not None:
                    pv = [evaluate(p, values) if not isinstance(p, float) else None for p in pads.value]
                    n = len(ins[0])
                    for k, size in enumerate(ins[0]):
                        if size is None or len(pv) < 2 * n:
                            continue
                        if any(p is not None and p >= size for p in (pv[k], pv[k + n])):
                            found.append(f"{label} reflects more than axis {k} holds ({size})")
                            break
        return found[:limit]


def _attr_s(node: onnx.NodeProto, name: str) -> str:
    return next((a.s.decode() for a in node.attribute if a.name == name), "")


def _txt(shape: list[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _broadcastable(shapes: list[list[int | None]]) -> bool:
    width = max(len(s) for s in shapes)
    for k in range(1, width + 1):
        sizes = {s[-k] for s in shapes if len(s) >= k and s[-k] is not None and s[-k] != 1}
        if len(sizes) > 1:
            return False
    return True


# ----------------------------------------------------------------------------- the choice
def _open_dims(model: onnx.ModelProto) -> tuple[dict[str, list[_Use]], dict[tuple[str, int], str]]:
    from editor.runtime.inputs import input_specs

    uses: dict[str, list[_Use]] = {}
    keys: dict[tuple[str, int], str] = {}
    for spec in input_specs(model):
        if spec.shape is None:
            continue
        is_float = spec.dtype.kind == "f" or spec.dtype.kind == "V"
        for axis, d in enumerate(spec.shape):
            key = dim_key(spec.name, axis, d)
            if key is None:
                continue
            keys[(spec.name, axis)] = key
            uses.setdefault(key, []).append(_Use(spec.name, axis, len(spec.shape), is_float, spec.shape))
    return uses, keys


def choose_dims(model: onnx.ModelProto, given: Mapping[str, int] | None = None, *,
                given_shapes: Mapping[str, tuple[int, ...]] | None = None, check: bool = True) -> DimPlan:
    """Values for every open dim of ``model``'s inputs, each with its provenance (module
    docstring). ``given``: the user's values by key (a dim name, or ``NAME[AXIS]``);
    ``given_shapes``: shapes of inputs the user gave (their dims count as given).
    ``check=False`` skips the shape engine (the defaults stand)."""
    given = dict(given or {})
    uses, keys = _open_dims(model)
    plan = DimPlan(keys=keys)
    if not uses:
        return plan
    from_inputs: dict[str, tuple[int, str]] = {}
    for name, shape in (given_shapes or {}).items():
        for axis, size in enumerate(shape):
            key = keys.get((name, axis))
            if key is not None:
                from_inputs.setdefault(key, (int(size), f"the shape of the given {name!r}"))
    rules: dict[str, tuple[int, str]] = {}
    for rule in _RULES:
        rules.update(rule(model, {k: tuple(u.label for u in us) for k, us in uses.items()}))
    meta = metadata_dims(model)
    for key, us in uses.items():
        labels = tuple(u.label for u in us)
        role, why = _role(key, us)
        user = given.get(key)
        if user is None:
            user = next((given[lb] for lb in labels if lb in given), None)
        if user is not None:
            plan.choices[key] = DimChoice(key, int(user), "given", role, "--dim", labels)
        elif key in from_inputs:
            value, src = from_inputs[key]
            plan.choices[key] = DimChoice(key, value, "given", role, src, labels)
        elif key in rules:
            value, src = rules[key]
            plan.choices[key] = DimChoice(key, int(value), "rule", role, src, labels)
        else:
            value, source, more = _default(role, us, meta)
            plan.choices[key] = DimChoice(key, value, source, role, f"{why}; {more}", labels)
    if check:
        _fit(model, plan)
    return plan


def _candidates(pref: int, role: str) -> list[int]:
    """Sizes to try for a guessed dim, nearest to ``pref`` first (by ratio): ``pref`` times
    1/8 ... 4 rounded to multiples of 8 ... 64, and the sizes models are commonly built for."""
    import math

    common = (32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 416, 448, 512, 640, 800, 1024) if role in (
        "height", "width", "depth") else (8, 16, 32, 64, 128, 256, 512, 1024, 4000, 8000, 16000, 32000)
    out = {-(-int(pref * s) // m) * m for s in (0.125, 0.25, 0.5, 1, 2, 4) for m in (1, 8, 16, 32, 64)}
    out.update(common)
    out.discard(pref)
    return sorted((v for v in out if v > 1), key=lambda v: (abs(math.log(v / pref)), v))[:40]


def _fit(model: onnx.ModelProto, plan: DimPlan) -> None:
    """Check the plan with the shape engine; move guessed spatial/sequence sizes until the
    graph's shapes agree (module docstring, step 5): one dim at a time first, nearest sizes
    first, then all together (one factor and rounding for every guessed dim)."""
    checker = _Checker(model, plan.keys)
    searched = {k for k, c in plan.choices.items() if c.guessed and c.role != "batch"}
    base = {k: c.value for k, c in plan.choices.items()}
    plan.problems = checker.problems(base, searched)
    growable = [k for k in plan.choices if k in searched and plan.choices[k].role != "other"]
    if not plan.problems or not growable:
        return
    trials = [{**base, k: v} for k in growable for v in _candidates(base[k], plan.choices[k].role)]
    for scale in (1, 0.5, 0.25, 2, 4):
        for mult in (1, 8, 16, 32, 64):
            trial = {**base, **{k: max(mult, -(-int(base[k] * scale) // mult) * mult) for k in growable}}
            if trial != base and trial not in trials:
                trials.append(trial)
    for trial in trials:
        if checker.problems(trial, searched, limit=1):
            continue
        first = plan.problems[0]
        for k in growable:
            if trial[k] != base[k]:
                c = plan.choices[k]
                plan.choices[k] = DimChoice(k, trial[k], c.source, c.role,
                                            f"{c.why}; {trial[k]}, not {base[k]}, so the model's shapes agree "
                                            f"(at {base[k]}: {first})", c.uses)
        plan.problems = []
        return
