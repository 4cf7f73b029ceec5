"""Calibration data: input sets to measure activation ranges on, and the sets held back to
prove the result on.

Users have data in one of a few shapes, each a constructor here:

* :func:`npz_calibration`: a folder of ``.npz`` input sets (what ``run --save`` writes as
  ``inputs.npz``: a folder of such folders works too), or one ``.npz``;
* :func:`image_calibration` (:mod:`editor.quantize.images`): a folder of pictures, resized
  and normalised by stated parameters or the model's metadata;
* :func:`feeds_calibration`: input sets already in memory (the Run dock's inputs);
* :func:`random_calibration`: N role-aware random sets from
  :func:`editor.runtime.input_plan.plan_inputs`, the one input function. Said loudly:
  random calibration is a smoke test (does it quantize, load and run), not accuracy: the
  ranges it measures are those of noise.

Inputs a set does not name are made by ``plan_inputs`` too (a detector's ``scale_factor``
beside its image), and said in the notes.

NOTE: held back means not calibrated on. With five or more sets, a fifth (at most 8) is
held back for the error measurement; with fewer, the error is measured on the calibration
sets themselves and the notes say so, because a measurement on the data the ranges came
from flatters the result. Random calibration draws its held-back sets with other seeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import onnx

from editor.errors import CommandError
from editor.runtime.input_plan import InputPlan, plan_inputs
from editor.runtime.values import Value

__all__ = ["RANDOM_WARNING", "CalibrationData", "feeds_calibration", "npz_calibration", "random_calibration",
           "split_held_back"]

RANDOM_WARNING = ("calibration on RANDOM inputs: a smoke test (the model quantizes, loads and runs), not "
                  "accuracy; give real inputs (--calibration DIR of .npz or images) to quantize for use")
#: held-back sets drawn with seeds far from the calibration sets'
_HELD_SEED = 1_000_000


@dataclass
class CalibrationData:
    """Input sets to calibrate on and input sets to measure the result on."""

    sets: list[dict[str, Value]]
    held_back: list[dict[str, Value]]
    #: where the sets came from, in words ("12 .npz sets from data/", "8 random sets (seed 0)")
    source: str
    random: bool = False
    #: whether ``held_back`` are other inputs than ``sets`` (module NOTE)
    independent: bool = True
    notes: list[str] = field(default_factory=list)
    #: the plan of the first calibration set: shapes, ranges and guessed dims (evidence)
    plan: InputPlan | None = None

    def lines(self) -> list[str]:
        """What the data is, one line each (the CLI prints them)."""
        held = (f"{len(self.held_back)} held-back set(s)" if self.independent
                else f"measured on the {len(self.held_back)} calibration set(s) themselves")
        out = [f"calibration: {self.source}; {held}"]
        if self.plan is not None:
            out += [f"  {u.text()}" for u in self.plan.inputs]
        if self.random:
            out.append(f"WARNING: {RANDOM_WARNING}")
        out += [f"note: {n}" for n in self.notes]
        return out

    def measuring_only(self) -> CalibrationData:
        """The data when nothing is calibrated on (dynamic, int4): every set given measures
        the result, and is independent of it."""
        if self.random:
            return self
        every = self.sets if not self.independent else self.sets + self.held_back
        return replace(self, held_back=every, independent=True,
                       notes=[n for n in self.notes if "measured on the calibration data" not in n])

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "sets": len(self.sets), "held_back": len(self.held_back),
                "held_back_independent": self.independent, "random": self.random, "notes": self.notes,
                "inputs": self.plan.to_json() if self.plan is not None else None}


def split_held_back(sets: Sequence[dict[str, Value]], held_back: int | None) -> tuple[list, list, bool]:
    """(calibration sets, held-back sets, independent) by the module NOTE's rule; an explicit
    ``held_back`` count is taken from the end."""
    sets = list(sets)
    if held_back is None:
        held_back = min(8, len(sets) // 5) if len(sets) >= 5 else 0
    if held_back < 0 or (held_back and held_back >= len(sets)):
        raise CommandError(f"cannot hold back {held_back} of {len(sets)} input set(s): "
                           "at least one must be left to calibrate on")
    if not held_back:
        return sets, sets, False
    return sets[:-held_back], sets[-held_back:], True


def _completed(model: onnx.ModelProto, given: Mapping[str, Value], dims: Mapping[str, int] | None,
               seed: int) -> InputPlan:
    """A full input set: ``given`` as it is, the inputs it lacks made by plan_inputs."""
    return plan_inputs(model, given=given, dims=dims, seed=seed)


def _from_sets(model: onnx.ModelProto, given: Sequence[Mapping[str, Value]], source: str, held_back: int | None,
               dims: Mapping[str, int] | None) -> CalibrationData:
    if not given:
        raise CommandError(f"{source}: no input set to calibrate on")
    plans = [_completed(model, g, dims, k) for k, g in enumerate(given)]
    made = sorted({u.name for p in plans for u in p.inputs if u.how != "given"})
    notes = [f"input(s) {', '.join(made)} not in the data: made by the input planner (as `run --random` does)"] \
        if made else []
    notes += sorted({n for p in plans for n in p.notes})
    cal, held, independent = split_held_back([p.feeds for p in plans], held_back)
    if not independent:
        notes.append(f"only {len(plans)} input set(s): the error is measured on the calibration data itself, "
                     "which flatters it (give 5 or more sets to hold some back)")
    return CalibrationData(cal, held, source, False, independent, notes, plans[0])


def npz_calibration(model: onnx.ModelProto, path: str | Path, *, held_back: int | None = None,
                    dims: Mapping[str, int] | None = None, limit: int | None = None) -> CalibrationData:
    """Input sets from ``.npz`` files: ``path`` itself, or every ``*.npz`` in the folder and
    every ``*/inputs.npz`` below it (``run --save DIR`` folders), in name order."""
    from editor.runtime.inputs import load_inputs

    p = Path(path)
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted({*p.glob("*.npz"), *p.glob("*/inputs.npz")})
    else:
        raise CommandError(f"calibration data not found: {str(p)!r}")
    if not files:
        raise CommandError(f"no .npz input set in {str(p)!r} (give a folder of .npz files, e.g. run --save folders)")
    files = files[:limit] if limit else files
    sets = [load_inputs(f, model) for f in files]
    where = str(p)
    return _from_sets(model, sets, f"{len(files)} .npz set(s) from {where}", held_back, dims)


def feeds_calibration(model: onnx.ModelProto, sets: Sequence[Mapping[str, Value]], source: str, *,
                      held_back: int | None = None, dims: Mapping[str, int] | None = None) -> CalibrationData:
    """Input sets already in memory (the Run dock's inputs), ``source`` naming them."""
    return _from_sets(model, sets, source, held_back, dims)


def random_calibration(model: onnx.ModelProto, count: int = 8, *, held_back: int = 4, seed: int = 0,
                       dims: Mapping[str, int] | None = None,
                       val_ranges: Mapping[str, tuple[float, float]] | None = None) -> CalibrationData:
    """``count`` role-aware random sets (and ``held_back`` more with other seeds) from
    :func:`plan_inputs`; a smoke test, said so (module docstring)."""
    if count < 1:
        raise CommandError(f"random calibration needs at least 1 set, not {count}")
    plans = [plan_inputs(model, dims=dims, seed=seed + 1000 * k, val_ranges=val_ranges) for k in range(count)]
    held = [plan_inputs(model, dims=dims, seed=_HELD_SEED + seed + 1000 * k, val_ranges=val_ranges).feeds
            for k in range(max(held_back, 1))]
    notes = list(plans[0].warnings())
    return CalibrationData([p.feeds for p in plans], held, f"{count} random set(s) (seed {seed})", True, True,
                           notes, plans[0])
