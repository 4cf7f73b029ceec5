"""Numeric debugging: where do two runs start to differ, and the smallest graph that fails.

Qt-free and scriptable; the ``compare`` / ``reduce`` commands and the window's Compare dock
are views of it.

- :func:`compare_runs` (:class:`RunSpec` x 2 -> :class:`Comparison`): every tensor of A
  against its counterpart, with error statistics and the first divergence;
- :func:`compare_to_saved`: one run against values saved earlier (``.npz``);
- :func:`map_tensors`: A's tensors -> B's through the structural diff (rewrites included);
- :func:`compare_values` / :class:`Tolerance`: the error statistics of one pair;
- :func:`reduce_model` with a :class:`FailureCheck` (:class:`NanCheck`,
  :class:`CrashCheck`, :class:`BackendDiffCheck`, :class:`ModelDiffCheck`): bisect to the
  smallest failing subgraph, saved with its inputs.
"""

from __future__ import annotations

from editor.debug.compare import compare_runs, compare_to_saved
from editor.debug.mapping import TensorMap, TensorPair, map_tensors, same_model_map
from editor.debug.metrics import TensorError, Tolerance, compare_values, dequantize
from editor.debug.verdict import EXIT_CODES, Comparison, RunFailed, RunSpec, SideRun, TensorResult
from editor.debug.reduce import (
    BackendDiffCheck,
    CrashCheck,
    DoesNotFail,
    FailureCheck,
    ModelDiffCheck,
    NanCheck,
    ReduceResult,
    reduce_model,
)

__all__ = [
    "EXIT_CODES",
    "BackendDiffCheck",
    "Comparison",
    "CrashCheck",
    "DoesNotFail",
    "FailureCheck",
    "ModelDiffCheck",
    "NanCheck",
    "ReduceResult",
    "RunFailed",
    "RunSpec",
    "SideRun",
    "TensorError",
    "TensorMap",
    "TensorPair",
    "TensorResult",
    "Tolerance",
    "compare_runs",
    "compare_to_saved",
    "compare_values",
    "dequantize",
    "map_tensors",
    "reduce_model",
    "same_model_map",
]
