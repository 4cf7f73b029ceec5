"""Records a run gives back: per-value records, backend attempts, and the run's outcome."""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from editor.errors import RuntimeBackendError
from editor.runtime.profiling import NodeTime
from editor.runtime.shared_values import ValueFile
from editor.runtime.stats import TensorStats, tensor_stats
from editor.runtime.values import Value

__all__ = ["Attempt", "OutputRecord", "RunResult", "signal_name"]


def signal_name(signum: int) -> str:
    """``8`` -> ``'SIGFPE'`` (``'signal 99'`` for numbers Python does not name)."""
    try:
        return _signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _kind_of(value: Value) -> str:
    if value is None:
        return "optional(empty)"
    if isinstance(value, np.ndarray):
        return "tensor"
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


@dataclass
class OutputRecord:
    """One produced value (a graph output or a requested intermediate).

    ``stats`` is computed on first access (cheap for results nobody looks at).
    For non-tensor values ``shape``/``dtype`` are ``None`` and ``summary`` describes them.
    """

    name: str
    value: Value
    #: where the value came from: 'output', 'intermediate', 'input', 'initializer'
    role: str = "output"
    note: str | None = None

    @property
    def kind(self) -> str:
        return _kind_of(self.value)

    @property
    def shape(self) -> tuple[int, ...] | None:
        return tuple(self.value.shape) if isinstance(self.value, np.ndarray) else None

    @property
    def dtype(self) -> str | None:
        if not isinstance(self.value, np.ndarray):
            return None
        return "str" if self.value.dtype.kind in "OUS" else str(self.value.dtype)

    @cached_property
    def stats(self) -> TensorStats | None:
        return tensor_stats(self.value) if isinstance(self.value, np.ndarray) else None

    @property
    def summary(self) -> str:
        """One line: ``float32 [1, 1000] min=... max=... mean=... std=... nan=0 inf=0``."""
        v = self.value
        if isinstance(v, np.ndarray):
            s = self.stats
            assert s is not None
            parts = [f"{self.dtype} {list(v.shape)}"]
            if s.min is not None:
                parts.append(f"min={_fmt(s.min)} max={_fmt(s.max)}")
            if s.mean is not None:
                parts.append(f"mean={_fmt(s.mean)} std={_fmt(s.std)}")
            if s.nan_count or s.inf_count:
                parts.append(f"nan={s.nan_count} inf={s.inf_count}")
            if s.unique_count is not None:
                parts.append(f"unique={s.unique_count}")
            return " ".join(parts)
        if v is None:
            return "optional: empty"
        if isinstance(v, list):
            inner = _kind_of(v[0]) if v else "empty"
            return f"sequence of {len(v)} ({inner})"
        if isinstance(v, dict):
            return f"map with {len(v)} entries"
        return repr(v)[:80]

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "role": self.role, "kind": self.kind}
        if isinstance(self.value, np.ndarray):
            d["shape"] = list(self.value.shape)
            d["dtype"] = self.dtype
            assert self.stats is not None
            d["stats"] = self.stats.to_dict()
        else:
            d["summary"] = self.summary
        if self.note:
            d["note"] = self.note
        return d


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


@dataclass(frozen=True)
class Attempt:
    """One backend's part in a run.

    ``status``: 'ran' (it produced the result), 'skipped' (``can_load`` refused: the reason
    says why), 'failed' (session creation or the run raised), 'crashed' (the worker process
    died), 'timeout', 'cancelled', 'unavailable'.
    """

    backend: str
    status: str
    reason: str | None = None


@dataclass
class RunResult:
    """The outcome of one run.

    ``status``: 'ok', 'failed', 'crashed', 'timeout' or 'cancelled'. ``backend`` names the
    backend that produced ``outputs`` (None if none did); ``attempts`` lists every backend
    tried, in order, with why earlier ones were passed over.
    """

    status: str
    backend: str | None = None
    outputs: dict[str, OutputRecord] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)
    #: requested values that could not be produced -> why
    missing: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    #: for a crash: the signal name ('SIGFPE') or the exit code of the worker
    signal: str | None = None
    exit_code: int | None = None
    #: node name -> time, when profiling was requested (onnxruntime only)
    profile: dict[str, NodeTime] | None = None
    #: backend details, e.g. the execution providers onnxruntime used
    detail: str | None = None
    #: seconds spent in the backend's run call, and in the whole request
    run_seconds: float | None = None
    wall_seconds: float | None = None
    #: the backend's own warnings (onnxruntime's log lines), passed on, not swallowed
    warnings: list[str] = field(default_factory=list)
    #: value name -> its shared file, kept open when the run was asked with a ``spill_dir``
    #: so that saving it is a link (:meth:`ValueFile.link_to`); closed by :meth:`close_files`
    value_files: dict[str, ValueFile] = field(default_factory=dict, repr=False, compare=False)

    def close_files(self) -> None:
        """Close the kept shared files (the mapped values stay readable)."""
        for f in self.value_files.values():
            f.close()
        self.value_files.clear()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def value(self, name: str) -> Value:
        return self.outputs[name].value

    def fallback_reasons(self) -> list[str]:
        """'backend: reason' for every backend passed over before the one that ran."""
        return [f"{a.backend}: {a.reason}" for a in self.attempts if a.status != "ran"]

    def raise_for_status(self) -> RunResult:
        if not self.ok:
            raise RuntimeBackendError(self.error or f"run {self.status}", details="\n".join(self.fallback_reasons()))
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "backend": self.backend,
            "detail": self.detail,
            "error": self.error,
            "signal": self.signal,
            "exit_code": self.exit_code,
            "attempts": [{"backend": a.backend, "status": a.status, "reason": a.reason} for a in self.attempts],
            "outputs": [r.to_json() for r in self.outputs.values()],
            "missing": self.missing,
            "profile": None
            if self.profile is None
            else {k: {"op_type": v.op_type, "us": v.microseconds, "calls": v.calls} for k, v in self.profile.items()},
            "run_seconds": self.run_seconds,
            "wall_seconds": self.wall_seconds,
            "warnings": list(self.warnings),
        }
