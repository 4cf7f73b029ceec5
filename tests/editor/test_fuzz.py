"""The fuzz target, small: mutated real models through info, check, convert, render and the
window's open, plus every model that ever failed (tests/fuzz/cases). No crash, no hang, no
traceback. ``make fuzz`` runs the full count (see tests/fuzz/harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.harness import CASES, mutated_models, run

#: default run: enough to touch every mutation kind and both seed sets, in well under a minute
COUNT = 16


@pytest.mark.timeout(240)
def test_mutated_models_never_crash_hang_or_trace_back(tmp_path: Path, corpus_dir: Path) -> None:
    paths = mutated_models(COUNT, seed=12345, folder=tmp_path)
    report = run(paths, timeout=60, log=lambda *_: None)
    assert report.models == COUNT
    assert report.findings == [], "\n".join(f"{f.path}: {f.step}: {f.what}" for f in report.findings)


@pytest.mark.timeout(240)
def test_every_model_that_ever_failed_still_passes() -> None:
    cases = sorted(CASES.glob("*.onnx"))
    assert cases, "the regression cases are missing"
    assert all(p.stat().st_size < 256_000 for p in cases), "keep regression cases small"
    report = run(cases, timeout=60, log=lambda *_: None)
    assert report.findings == [], "\n".join(f"{f.path}: {f.step}: {f.what}" for f in report.findings)
