"""The short soak (tests/benchmarks/bench_soak.py with small numbers) in the real window:
an edit costs no more with hundreds of commands on the stack than with a few (the History
panel no longer rebuilds), edit->run cycles keep one copy in the run worker, and closing the
tab releases it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


@pytest.mark.timeout(240)
def test_short_soak_has_no_upward_slope(qtbot, window, tmp_path):
    from bench_soak import heavy_model, run_soak

    window.editing.history_dock.show()
    report = run_soak(nodes=300, edits=600, block=150, undo_all=300, run_model=heavy_model(tmp_path / "h.onnx", 24),
                      runs=3, tabs=0, app_and_window=(qtbot._qapp if hasattr(qtbot, "_qapp") else __import__(
                          "PySide6.QtWidgets").QtWidgets.QApplication.instance(), window))
    blocks = report.edit_blocks
    assert len(blocks) == 4 and blocks[-1]["depth"] == 600
    # the slope, not a time: 450 more commands on the stack may not cost a rebuild per edit
    # (the old panel: ~10 µs per stacked command, +4.5 ms here)
    first, last = blocks[0]["median_ms"], blocks[-1]["median_ms"]
    assert last <= first * 1.5 + 1.0, [b["median_ms"] for b in blocks]
    assert report.undo_all["steps"] == 300
    runs = report.runs
    assert all(r["ok"] for r in runs) and all(r["models"] == 1 for r in runs)
    assert report.release["released_s"] is not None and report.release["released_s"] <= 2.0
