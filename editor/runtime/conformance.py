"""Check this installation's backends against the ONNX backend test suite.

Every model of the suite runs through the real child-process path (one warm
:class:`~editor.runtime.runner.Runner`, automatic fallback) and each output is compared with
the suite's expected value at rtol 1e-3 / atol 1e-5. Used by the conformance test, and as a
script that prints the failures by category::

    python -m editor.runtime.conformance SUITE_DIR [--json FILE]

``SUITE_DIR`` holds ``node/``, ``pytorch-converted/``, ``pytorch-operator/``, ``simple/``
(``<test>/model.onnx`` + ``test_data_set_N/{input,output}_K.pb``) and ``light/``
(``light_<net>.onnx`` + ``light_<net>_output_0.pb``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from editor.runtime import Runner, input_specs
from editor.runtime.values import load_value_file, values_close

RTOL, ATOL = 1e-3, 1e-5


@dataclass
class Case:
    """One model of the suite with its data sets."""

    name: str
    model: Path
    #: one (inputs, expected outputs) pair per test_data_set
    data: list[tuple[dict, list]]
    output_names: list[str]


def backend_cases(root: Path, select: Callable[[Path], bool] | None = None) -> list[Case]:
    """Every case under ``root`` (or those whose model path ``select`` takes), sorted, inputs
    and expected outputs loaded."""
    cases = []
    for model_path in sorted(root.glob("*/*/model.onnx")):
        if select is not None and not select(model_path):
            continue
        folder = model_path.parent
        model = onnx.load(str(model_path), load_external_data=False)
        specs = input_specs(model)
        outs = list(model.graph.output)
        data = []
        for ds in sorted(folder.glob("test_data_set_*")):
            feeds = {}
            for k, spec in enumerate(specs):
                p = ds / f"input_{k}.pb"
                if p.exists():
                    feeds[spec.name] = load_value_file(p, spec.type)
            expected = [load_value_file(ds / f"output_{k}.pb", o.type) for k, o in enumerate(outs) if (ds / f"output_{k}.pb").exists()]
            data.append((feeds, expected))
        cases.append(Case(str(folder.relative_to(root)), model_path, data, [o.name for o in outs]))
    for model_path in sorted((root / "light").glob("light_*.onnx")):
        if select is not None and not select(model_path):
            continue
        model = onnx.load(str(model_path), load_external_data=False)
        # The light models' weights are constants (ConstantOfShape 0.02 ...): their output
        # does not depend on the image, and the suite ships no input; zeros reproduce it.
        feeds = {s.name: np.zeros([d if isinstance(d, int) else 1 for d in s.shape or ()], s.dtype) for s in input_specs(model)}
        expected = [load_value_file(model_path.with_name(model_path.stem + "_output_0.pb"), model.graph.output[0].type)]
        cases.append(Case(f"light/{model_path.stem}", model_path, [(feeds, expected)], [model.graph.output[0].name]))
    return cases


@dataclass
class Outcome:
    """Whether a case was reproduced, by which backend, and if not, why."""

    name: str
    passed: bool
    backend: str | None
    reason: str | None
    attempts: list[str]


def run_case(runner: Runner, case: Case, timeout: float = 120.0) -> Outcome:
    """Run every data set of ``case``; the first mismatch or failure decides."""
    backend = None
    attempts: list[str] = []
    for feeds, expected in case.data:
        result = runner.run(case.model, feeds, timeout=timeout)
        attempts = [f"{a.backend}:{a.status}:{a.reason}" for a in result.attempts if a.status != "ran"]
        if not result.ok:
            return Outcome(case.name, False, None, f"no backend ran: {result.error}", attempts)
        backend = result.backend
        for name, exp in zip(case.output_names, expected):
            if name not in result.outputs:
                return Outcome(case.name, False, backend, f"output {name!r} missing", attempts)
            why = values_close(result.outputs[name].value, exp, rtol=RTOL, atol=ATOL)
            if why:
                return Outcome(case.name, False, backend, f"{name}: {why}", attempts)
    return Outcome(case.name, True, backend, None, attempts)


def run_suite(root: Path, select: Callable[[Path], bool] | None = None) -> tuple[list[Outcome], float]:
    """All cases (or those ``select`` takes, see :func:`backend_cases`) through one warm
    runner; the outcomes and the seconds it took."""
    start = time.monotonic()
    cases = backend_cases(root, select)
    outcomes = []
    with Runner() as runner:
        for case in cases:
            outcomes.append(run_case(runner, case))
    return outcomes, time.monotonic() - start


_CATEGORIES = [
    (r"bernoulli|training_dropout", "random output (Bernoulli, training-mode Dropout): cannot match"),
    (r"test_dft|test_stft", "DFT/STFT: onnxruntime's values differ near zero"),
    (r"align_corners", "Resize align_corners (downsample): onnxruntime's values differ"),
    (r"maxunpool", "MaxUnpool with output_shape: onnxruntime's values differ"),
    (r"ImageDecoder|Pillow", "ImageDecoder: no onnxruntime kernel; the reference one needs Pillow (not installed)"),
    (r"Gradient", "training op Gradient: no backend implements it"),
    (r"range_.*_expanded", "Range (expanded, opset 27): too new for onnxruntime; reference Loop gives shape (2,1) not (2,)"),
]


def categorize(outcome: Outcome) -> str:
    """A README-style category for a failed case."""
    text = f"{outcome.name} {outcome.reason} {' '.join(outcome.attempts)}"
    for pattern, label in _CATEGORIES:
        if re.search(pattern, text, re.I):
            return label
    if outcome.backend:
        return f"values differ on {outcome.backend}"
    return "no backend could run it"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m editor.runtime.conformance")
    ap.add_argument("suite_dir", type=Path, help="the onnx-backend folder")
    ap.add_argument("--json", help="write every outcome to this file")
    args = ap.parse_args(argv)
    outcomes, seconds = run_suite(args.suite_dir)
    passed = sum(o.passed for o in outcomes)
    by_backend = Counter(o.backend for o in outcomes if o.passed)
    print(f"{passed} of {len(outcomes)} reproduced in {seconds:.1f} s; by backend: {dict(by_backend)}")
    cats = Counter(categorize(o) for o in outcomes if not o.passed)
    for label, n in cats.most_common():
        print(f"{n:4d}  {label}")
    for o in outcomes:
        if not o.passed:
            print(f"  FAIL {o.name} [{o.backend}] {o.reason}")
    if args.json:
        Path(args.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
