"""Error statistics between two values of the same tensor, and what counts as "agree".

``compare_values(a, b, tol)`` gives a :class:`TensorError`: max abs / max rel / mean abs
error, cosine similarity, NaN / Inf counts on each side and whether the pair is within
tolerance. Agreement is numpy's ``isclose`` rule, elementwise ``|a - b| <= atol + rtol*|b|``
with ``b`` the reference side (``max_rel`` divides by ``max(|b|, atol)``), NaN equal to NaN at the same place and an Inf equal only to
the same Inf: a NaN that appears on one side only is always a disagreement, whatever the
tolerance.

NOTE: NaN and Inf are findings. ``ok`` above is the numeric rule (equal NaN at the same
place is not a *disagreement*), but a value that holds NaN or Inf on either side is never
"agreement" in a verdict: :meth:`TensorError.nonfinite_text` says in words what each side
holds ("A finite, B 12 of 4096 NaN"), and :mod:`editor.debug.compare` refuses to call
outputs that hold one equal (``Tolerance.infinities_equal`` lets the same Inf at the same
place on both sides agree; NaN never does).

NOTE: cost. Comparing every intermediate of a model must stay a small fraction of running it
(the benchmark asks for compare <= 3x one run), so floats are compared in their own precision
when that is float32 or wider, with sums accumulated in float64; half precisions and ints are
widened. Memory: a pair is compared in chunks of :data:`CHUNK` elements, so the working
memory is a few MB whatever the tensor (no float64 copy of a 1 GB output).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

__all__ = ["Tolerance", "TensorError", "compare_values", "dequantize"]


@dataclass(frozen=True)
class Tolerance:
    """``atol`` / ``rtol`` for every tensor, with per-tensor overrides (graph outputs
    usually) by name on side A."""

    atol: float = 1e-4
    rtol: float = 1e-3
    per_tensor: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: the same +Inf / -Inf at the same place on both sides counts as agreement in a verdict
    #: (an output of log-probabilities, a mask); NaN never does
    infinities_equal: bool = False

    def for_tensor(self, name: str) -> tuple[float, float]:
        return self.per_tensor.get(name, (self.atol, self.rtol))


@dataclass
class TensorError:
    """How far apart two values of one tensor are (see module docstring)."""

    ok: bool
    max_abs: float | None = None
    max_rel: float | None = None
    mean_abs: float | None = None
    cosine: float | None = None
    nan_a: int = 0
    nan_b: int = 0
    inf_a: int = 0
    inf_b: int = 0
    #: elements outside tolerance
    mismatched: int = 0
    size: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}
        out["nonfinite"] = self.nonfinite_text() or None
        return out

    @property
    def nonfinite(self) -> bool:
        """Whether either side holds a NaN or an Inf."""
        return bool(self.nan_a or self.nan_b or self.inf_a or self.inf_b)

    def nonfinite_text(self) -> str:
        """What each side holds in words ("A finite, B all NaN"); '' when both are finite."""
        if not self.nonfinite:
            return ""
        return f"A {_side_text(self.nan_a, self.inf_a, self.size)}, B {_side_text(self.nan_b, self.inf_b, self.size)}"

    def verdict_ok(self, infinities_equal: bool = False) -> bool:
        """Whether this pair may count as agreement in a verdict: within tolerance and
        finite on both sides (or, with ``infinities_equal``, the same Inf in the same places
        and no NaN anywhere)."""
        if not self.ok:
            return False
        if self.nan_a or self.nan_b:
            return False
        return infinities_equal or not (self.inf_a or self.inf_b)


def _side_text(nan: int, inf: int, size: int) -> str:
    parts = []
    if nan:
        parts.append("all NaN" if nan == size else f"{nan} of {size} NaN")
    if inf:
        parts.append("all Inf" if inf == size else f"{inf} of {size} Inf")
    return " and ".join(parts) or "finite"


def dequantize(q: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, axis: int = 1,
               block_size: int = 0) -> np.ndarray:
    """``(q - zero_point) * scale`` as float32 (DequantizeLinear): per tensor (a scalar
    scale), per ``axis`` (one scale per index), or per block (``block_size`` elements on
    ``axis`` share a scale, the scale tensor shaped like ``q`` with that axis divided)."""
    scale = np.asarray(scale, np.float32)
    zp = np.zeros_like(scale, dtype=np.float32) if zero_point is None else np.asarray(zero_point).astype(np.float32)
    if q.ndim and scale.size > 1:
        axis = axis + q.ndim if axis < 0 else axis
        if block_size > 0 and scale.ndim == q.ndim:
            scale = np.repeat(scale, block_size, axis=axis).take(range(q.shape[axis]), axis=axis)
            zp = np.repeat(zp, block_size, axis=axis).take(range(q.shape[axis]), axis=axis) if zp.ndim == q.ndim \
                else zp
        elif scale.ndim == 1:
            shape = [1] * q.ndim
            shape[axis] = scale.size
            scale = scale.reshape(shape)
            zp = zp.reshape(shape) if zp.size == scale.size else zp
    return ((q.astype(np.float32) - zp) * scale).astype(np.float32)


def _work_dtype(x: np.ndarray) -> np.dtype:
    if x.dtype in (np.float32, np.float64):
        return x.dtype
    return np.dtype(np.float64)


def compare_values(a: Any, b: Any, atol: float = 1e-4, rtol: float = 1e-3) -> TensorError:
    """Errors of ``a`` against the reference ``b`` (see module docstring).

    Values that are not numeric tensors (strings, sequences, maps) are equal or not; shapes
    that differ but hold as many elements (a squeezed axis) are compared flat, with a note.
    """
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        same = _same_non_tensor(a, b)
        return TensorError(ok=same, note="compared as whole values" if same else "values differ (not tensors)")
    note = ""
    if a.shape != b.shape:
        if a.size != b.size:
            return TensorError(ok=False, size=int(a.size), note=f"shape {list(a.shape)} vs {list(b.shape)}")
        note = f"shape {list(a.shape)} vs {list(b.shape)}, compared flat"
    if a.dtype.kind in "OUS" or b.dtype.kind in "OUS":
        diff = int(np.count_nonzero(a.reshape(-1).astype(str) != b.reshape(-1).astype(str)))
        return TensorError(ok=diff == 0, mismatched=diff, size=int(a.size), note=note or "strings")
    x, y = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    try:
        wd = np.promote_types(_work_dtype(_carrier(x)), _work_dtype(_carrier(y)))
    except (TypeError, ValueError) as exc:
        return TensorError(ok=False, size=int(a.size), note=f"not comparable: {exc}")
    size = int(x.size)
    if size == 0:
        return TensorError(ok=True, max_abs=0.0, max_rel=0.0, mean_abs=0.0, cosine=1.0, note=note or "empty")
    acc = _Sums()
    try:
        for start in range(0, size, CHUNK):
            cx = _as_work(x[start:start + CHUNK], wd)
            cy = _as_work(y[start:start + CHUNK], wd)
            acc.add(cx, cy, atol, rtol)
    except (TypeError, ValueError) as exc:
        return TensorError(ok=False, size=size, note=f"not comparable: {exc}")
    return acc.result(size, note)


#: elements compared at a time: the temporaries of one chunk (differences, bounds, float64
#: copies for the sums) are a few MB whatever the tensor, so comparing two runs holds the two
#: runs' values plus this, not several copies of the biggest tensor
CHUNK = 1 << 18


def _carrier(x: np.ndarray) -> np.ndarray:
    """An empty array of the dtype ``x`` is compared in (ml_dtypes and bool as float32)."""
    return np.empty(0, np.float32) if x.dtype.kind in "Vb" else x[:0]


def _as_work(chunk: np.ndarray, wd: np.dtype) -> np.ndarray:
    if chunk.dtype.kind in "Vb":
        chunk = chunk.astype(np.float32)
    return chunk.astype(wd, copy=False)


class _Sums:
    """What :func:`compare_values` accumulates over the chunks of a pair."""

    def __init__(self) -> None:
        self.bad = 0
        self.nan_x = self.nan_y = self.inf_x = self.inf_y = 0
        self.count = 0  # pairs where both sides are finite
        self.sum_abs = 0.0
        self.max_abs = self.max_rel = -math.inf
        self.xx = self.yy = self.xy = 0.0

    def add(self, x: np.ndarray, y: np.ndarray, atol: float, rtol: float) -> None:
        fin_x, fin_y = np.isfinite(x), np.isfinite(y)
        if fin_x.all() and fin_y.all():  # the common case: no masks
            both = None
        else:
            nan_x, nan_y = np.isnan(x), np.isnan(y)
            n_nan_x, n_nan_y = int(nan_x.sum()), int(nan_y.sum())
            self.nan_x += n_nan_x
            self.nan_y += n_nan_y
            self.inf_x += int(x.size - fin_x.sum() - n_nan_x)
            self.inf_y += int(y.size - fin_y.sum() - n_nan_y)
            both = fin_x & fin_y
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(x - y)
            abs_y = np.abs(y)
            bound = rtol * abs_y
            bound += atol
            if both is None:
                self.bad += int(np.count_nonzero(diff > bound))
                fd, fy, fx, fay = diff, y, x, abs_y
            else:
                # equal NaN and equal Inf count as agreeing; any other non-finite pair does not
                special_same = (nan_x & nan_y) | (~fin_x & ~nan_x & (x == y))
                self.bad += int(np.count_nonzero(~(special_same | (both & (diff <= bound)))))
                fd, fy, fx, fay = diff[both], y[both], x[both], abs_y[both]
        if not fd.size:
            return
        self.count += int(fd.size)
        self.max_abs = max(self.max_abs, float(fd.max()))
        self.sum_abs += float(fd.sum(dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # relative to the reference, but not to values below atol (noise around zero
            # would make any relative error astronomic)
            rel = fd / np.maximum(fay, max(atol, float(np.finfo(np.float32).tiny)))
        self.max_rel = max(self.max_rel, float(rel.max()))
        # NOTE: einsum, not np.dot: a float32 . float64 dot takes numpy's slow generic loop,
        # and a BLAS dot wakes OpenBLAS's thread pool, which on a busy machine costs 25 ms
        # for 65k elements (measured) against 0.1 ms here
        x64 = fx.astype(np.float64, copy=False)
        y64 = fy.astype(np.float64, copy=False)
        self.xx += float(np.einsum("i,i->", x64, x64))
        self.yy += float(np.einsum("i,i->", y64, y64))
        self.xy += float(np.einsum("i,i->", x64, y64))

    def result(self, size: int, note: str) -> TensorError:
        if self.count:
            nx, ny = math.sqrt(self.xx), math.sqrt(self.yy)
            if nx == 0.0 and ny == 0.0:
                cosine: float | None = 1.0
            elif nx == 0.0 or ny == 0.0:
                cosine = 0.0
            else:
                cosine = self.xy / (nx * ny)
            max_abs: float | None = self.max_abs
            max_rel: float | None = self.max_rel
            mean_abs: float | None = self.sum_abs / self.count
        else:
            max_abs = mean_abs = max_rel = cosine = None
        return TensorError(ok=self.bad == 0, max_abs=max_abs, max_rel=max_rel, mean_abs=mean_abs, cosine=cosine,
                           nan_a=self.nan_x, nan_b=self.nan_y, inf_a=self.inf_x, inf_b=self.inf_y,
                           mismatched=self.bad, size=size, note=note)


def _same_non_tensor(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(compare_values(x, y, 0.0, 0.0).ok for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(compare_values(a[k], b[k], 0.0, 0.0).ok for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    return a == b
