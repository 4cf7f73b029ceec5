"""Running models: backends (onnxruntime, the ONNX reference evaluator), an isolated warm
worker process, intermediate values, inputs and result statistics. Qt-free.

Entry points: :class:`Runner` (child-process runs with fallback, timeout and cancel),
:class:`OrtBackend` / :class:`ReferenceBackend` (the :class:`Backend` interface, also usable
in-process), :func:`plan_inputs` (a run's inputs and what they are: the one function every
caller uses; :func:`choose_dims` its sizes, :func:`make_inputs` its values alone),
:func:`input_specs` and :func:`tensor_stats`.
"""

from __future__ import annotations

from editor.runtime.backends import (
    BACKENDS,
    Backend,
    LoadedModel,
    OrtBackend,
    ReferenceBackend,
    RunOptions,
    backend_by_name,
)
from editor.runtime.input_dims import DimChoice, DimPlan, choose_dims
from editor.runtime.input_plan import InputPlan, InputUse, plan_inputs
from editor.runtime.inputs import InputSpec, guess_dim, input_specs, load_input_file, make_input, make_inputs, resolve_shape
from editor.runtime.profiling import NodeTime, parse_ort_profile
from editor.runtime.result import Attempt, OutputRecord, RunResult
from editor.runtime.runner import DEFAULT_ORDER, Runner
from editor.runtime.source import ModelSource, load_model
from editor.runtime.stats import TensorStats, tensor_stats

__all__ = [
    "BACKENDS",
    "DEFAULT_ORDER",
    "Attempt",
    "Backend",
    "DimChoice",
    "DimPlan",
    "InputPlan",
    "InputSpec",
    "InputUse",
    "LoadedModel",
    "ModelSource",
    "NodeTime",
    "OrtBackend",
    "OutputRecord",
    "ReferenceBackend",
    "RunOptions",
    "RunResult",
    "Runner",
    "TensorStats",
    "backend_by_name",
    "choose_dims",
    "guess_dim",
    "input_specs",
    "load_input_file",
    "load_model",
    "make_input",
    "make_inputs",
    "parse_ort_profile",
    "plan_inputs",
    "resolve_shape",
    "tensor_stats",
]
