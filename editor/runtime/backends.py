"""Backends that run a model: onnxruntime (every execution provider the build offers) and
the ONNX reference evaluator, behind one interface.

A backend is used in three steps, so a long-lived worker can cache the expensive middle one:

1. ``can_load(model, requested)`` — a precise reason it cannot run this model, or None;
2. ``prepare(loaded, requested, options)`` — build a session (cached by the worker, keyed by
   model key + backend + options + requested values);
3. ``execute(prepared, inputs, options)`` — run it, giving a :class:`BackendOutput`.

``Backend.run`` chains them in the current process (handy in scripts and tests); the editor
runs through :class:`editor.runtime.runner.Runner`, which does the same in a child process
and falls back from one backend to the next.

NOTE: onnxruntime's Python binding cannot hand numpy arrays of bfloat16 / float8 to a session
nor return them, but ``OrtValue.ortvalue_from_numpy_with_onnx_type`` accepts their bytes
reinterpreted as uint8/uint16, and an output OrtValue's bytes can be read through its data
pointer; the OrtBackend does both, so those models run on onnxruntime. Packed sub-byte types
(int4/uint4/int2/uint2/float4e2m1) have no such route: ``can_load`` refuses them by name.
"""

from __future__ import annotations

import ctypes
import re
import functools
import os
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
import onnx

from editor.errors import RuntimeBackendError
from editor.runtime.intermediates import ValueScopes, expose_outputs, value_scopes
from editor.runtime.ort_log import capture_warnings
from editor.runtime.profiling import NodeTime, parse_ort_profile
from editor.runtime.result import Attempt, OutputRecord, RunResult
from editor.runtime.source import ModelSource
from editor.runtime.values import SUB_BYTE_TYPES, Value, elem_type_name, normalize_value, type_kind

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendOutput",
    "LoadedModel",
    "OrtBackend",
    "ReferenceBackend",
    "RunOptions",
    "as_loaded",
    "backend_by_name",
    "build_result",
    "clean_message",
    "value_roles",
]


@dataclass(frozen=True)
class RunOptions:
    """Options of a run; the worker's session cache keys on :meth:`session_key`.

    ``providers``: onnxruntime execution providers in priority order (None: the best the
    build offers, see :meth:`OrtBackend.default_providers`). ``graph_optimization_level``:
    'disable', 'basic', 'extended', 'layout' or 'all'. Threads 0 = onnxruntime's default.
    ``profile``: collect per-node times (onnxruntime only). ``memory_limit_mb``: cap the
    worker's address space (RLIMIT_AS) for this run, so a runaway allocation fails cleanly.

    NOTE: ``allow_spinning`` is off by default, unlike onnxruntime's own default: its
    intra-op threads otherwise busy-wait after every run, and in an editor that CPU belongs
    to the GUI (and, on small machines, to the worker's own reply). Measured on the 2-core
    CI box, turning it off cut the median time added around ``session.run`` from ~11.6 ms to
    ~7.4 ms under load (tests/benchmarks/bench_runtime.py); the run itself was not
    measurably slower in the same measurements.
    """

    providers: tuple[str, ...] | None = None
    graph_optimization_level: str = "all"
    intra_op_threads: int = 0
    inter_op_threads: int = 0
    profile: bool = False
    memory_limit_mb: int | None = None
    allow_spinning: bool = False

    def session_key(self) -> tuple[Any, ...]:
        return (
            self.providers,
            self.graph_optimization_level,
            self.intra_op_threads,
            self.inter_op_threads,
            self.profile,
            self.allow_spinning,
        )


class LoadedModel:
    """A parsed model in the worker, with facts every backend asks about (computed once)."""

    def __init__(self, source: ModelSource, proto: onnx.ModelProto) -> None:
        self.source = source
        self.proto = proto
        self._full: onnx.ModelProto | None = None
        self._scopes: ValueScopes | None = None

    @classmethod
    def from_source(cls, source: ModelSource) -> LoadedModel:
        return cls(source, source.load_proto())

    def model_bytes(self) -> bytes:
        """The serialized model: the bytes it came as while kept, else the proto again."""
        if self.source.data is not None:
            return self.source.data
        return self.proto.SerializeToString()

    def drop_source_bytes(self) -> None:
        """Forget the bytes the model came as (the proto has it all): one copy less held."""
        if self.source.data is not None:
            self.source = self.source.without_data()

    @property
    def scopes(self) -> ValueScopes:
        if self._scopes is None:
            self._scopes = value_scopes(self.proto)
        return self._scopes

    @property
    def uses_external_data(self) -> bool:
        return any(
            t.data_location == onnx.TensorProto.EXTERNAL for t in self.proto.graph.initializer
        )

    def full_proto(self) -> onnx.ModelProto:
        """The model with external data loaded (for backends that need the weights in memory)."""
        if not self.uses_external_data:
            return self.proto
        if self._full is None:
            base = self.source.base_dir
            if base is None:
                raise RuntimeBackendError("model uses external data but its folder is unknown")
            full = onnx.ModelProto()
            full.CopyFrom(self.proto)
            onnx.external_data_helper.load_external_data_for_model(full, base)
            self._full = full
        return self._full

    def opset(self, domain: str = "") -> int | None:
        for op in self.proto.opset_import:
            if op.domain == domain or (domain == "" and op.domain == "ai.onnx"):
                return op.version
        return None


@dataclass
class BackendOutput:
    values: dict[str, Value]
    missing: dict[str, str] = field(default_factory=dict)
    profile: dict[str, NodeTime] | None = None
    detail: str | None = None
    run_seconds: float = 0.0
    #: the backend's own warnings (onnxruntime's log), in order
    warnings: list[str] = field(default_factory=list)


def clean_message(exc: BaseException | str, limit: int = 300) -> str:
    """One readable line from a backend exception (onnxruntime's carry C++ source paths)."""
    text = str(exc) if not isinstance(exc, str) else exc
    text = text.replace("[ONNXRuntimeError] : ", "")
    text = re.sub(r"^\d+ : [A-Z_]+ : ", "", text)
    text = re.sub(r"Load model from .*? failed:\s*(Fatal error:\s*)?", "", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[0] if lines else (type(exc).__name__ if not isinstance(exc, str) else "error")
    # "/onnxruntime_src/.../file.cc:52 virtual onnxruntime::X::Compute(...) const <message>"
    if "/onnxruntime_src/" in line:
        head, _, rest = line.partition("/onnxruntime_src/")
        msg = rest
        # drop "path:line signature" up to the last ") " or ") const "
        for marker in (") const ", ") "):
            idx = msg.rfind(marker)
            if idx != -1:
                msg = msg[idx + len(marker) :]
                break
        line = (head + msg).strip()
    if not isinstance(exc, str) and not isinstance(exc, RuntimeBackendError):
        name = type(exc).__name__
        if name not in ("Fail", "RuntimeException", "InvalidArgument", "NotImplemented", "InvalidGraph"):
            line = f"{name}: {line}" if not line.startswith(name) else line
    return line[:limit]


def as_loaded(model: LoadedModel | ModelSource | onnx.ModelProto | str | bytes | Any) -> LoadedModel:
    """Accept what callers naturally have (a ModelProto, a path, bytes) where a backend
    step wants a :class:`LoadedModel`."""
    if isinstance(model, LoadedModel):
        return model
    return LoadedModel.from_source(ModelSource.from_any(model))


def _requested_problem(loaded: LoadedModel, requested: Sequence[str]) -> str | None:
    for name in requested:
        if loaded.scopes.where(name) is None:
            return f"no value named {name!r} in the model"
    return None


class Backend(ABC):
    """One way to run a model."""

    name: ClassVar[str]

    @abstractmethod
    def available(self) -> bool:
        """Whether this backend can run at all in this installation."""

    def unavailable_reason(self) -> str | None:
        return None if self.available() else f"{self.name} is not installed"

    @abstractmethod
    def can_load(self, loaded: LoadedModel, requested: Sequence[str] = (), options: RunOptions | None = None) -> str | None:
        """None if it can try this model; else one precise line saying why not.

        ``loaded`` may also be a ModelProto, a path or bytes (see :func:`as_loaded`);
        ``requested`` are the value names the run must produce (default: graph outputs).
        """

    @abstractmethod
    def prepare(self, loaded: LoadedModel, requested: tuple[str, ...], options: RunOptions) -> Any:
        """Build a session for ``loaded`` that can produce ``requested`` values."""

    @abstractmethod
    def execute(self, prepared: Any, inputs: Mapping[str, Value], options: RunOptions) -> BackendOutput:
        """Run a prepared session."""

    def run(
        self,
        model: ModelSource | str | bytes | onnx.ModelProto,
        inputs: Mapping[str, Value],
        outputs: Sequence[str] | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        """Run in *this* process (no isolation): can_load, prepare, execute."""
        options = options or RunOptions()
        start = time.perf_counter()
        loaded = LoadedModel.from_source(ModelSource.from_any(model))
        requested = tuple(outputs) if outputs else tuple(loaded.scopes.outputs)
        reason = self.can_load(loaded, requested, options)
        if reason:
            return RunResult(status="failed", error=f"{self.name}: {reason}", attempts=[Attempt(self.name, "skipped", reason)])
        try:
            prepared = self.prepare(loaded, requested, options)
            out = self.execute(prepared, inputs, options)
        except Exception as exc:  # noqa: BLE001 - any backend error becomes a result
            msg = clean_message(exc)
            return RunResult(status="failed", error=f"{self.name}: {msg}", attempts=[Attempt(self.name, "failed", msg)])
        roles = value_roles(loaded.scopes, requested)
        return build_result(self.name, roles, out, [Attempt(self.name, "ran")], time.perf_counter() - start)


def value_roles(scopes: ValueScopes, requested: Sequence[str]) -> dict[str, str]:
    """name -> 'output' | 'intermediate' | 'input' | 'initializer' for each requested name."""
    outputs_set = set(scopes.outputs)
    roles = {}
    for name in requested:
        where = scopes.where(name)
        if name in outputs_set:
            roles[name] = "output"
        else:
            roles[name] = {"input": "input", "initializer": "initializer"}.get(where or "", "intermediate")
    return roles


def build_result(
    backend: str,
    roles: Mapping[str, str],
    out: BackendOutput,
    attempts: list[Attempt],
    wall: float,
) -> RunResult:
    """A successful :class:`RunResult` from a backend's output (``roles`` in request order)."""
    records: dict[str, OutputRecord] = {}
    for name, role in roles.items():
        if name in out.values:
            records[name] = OutputRecord(name=name, value=out.values[name], role=role)
    return RunResult(
        status="ok",
        backend=backend,
        outputs=records,
        attempts=attempts,
        missing=dict(out.missing),
        profile=out.profile,
        detail=out.detail,
        run_seconds=out.run_seconds,
        wall_seconds=wall,
        warnings=list(out.warnings),
    )


def _initializer_value(loaded: LoadedModel, name: str) -> Value:
    for init in loaded.proto.graph.initializer:
        if init.name == name:
            return normalize_value(onnx.numpy_helper.to_array(init, base_dir=loaded.source.base_dir or ""))
    for sparse in loaded.proto.graph.sparse_initializer:
        if sparse.values.name == name:
            return normalize_value(_densify(sparse))
    raise KeyError(name)


def _densify(sparse: onnx.SparseTensorProto) -> np.ndarray:
    values = onnx.numpy_helper.to_array(sparse.values)
    indices = onnx.numpy_helper.to_array(sparse.indices)
    dense = np.zeros(int(np.prod(sparse.dims)), dtype=values.dtype)
    if indices.ndim == 1:
        dense[indices] = values
    else:
        dense[np.ravel_multi_index(indices.T, tuple(sparse.dims))] = values
    return dense.reshape(tuple(sparse.dims))


# ----------------------------------------------------------------------------- onnxruntime

# ONNX element types the binding passes as raw bytes through OrtValue (see module NOTE).
_RAW_TYPES: dict[int, np.dtype] = {}
for _name in ("BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0"):
    _code = getattr(onnx.TensorProto, _name, None)
    if _code is not None:
        try:
            _RAW_TYPES[_code] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(_code))
        except (KeyError, TypeError, ValueError):
            pass

_OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "layout": "ORT_ENABLE_LAYOUT", "all": "ORT_ENABLE_ALL"}

# Providers that are present in every build but are not local execution engines.
_NON_LOCAL_PROVIDERS = {"AzureExecutionProvider"}
# Providers that compile engines for minutes on a session's first run: only when asked for.
_OPT_IN_PROVIDERS = {"TensorrtExecutionProvider", "NvTensorRTRTXExecutionProvider"}


@functools.lru_cache(maxsize=1)
def _ort_max_opset() -> int:
    """The newest ai.onnx opset this onnxruntime accepts, found once by trying tiny models
    (its own error says "Opset N is under development" past that point)."""
    import onnxruntime as ort

    def loads(opset: int) -> bool:
        g = onnx.helper.make_graph(
            [onnx.helper.make_node("Identity", ["x"], ["y"])],
            "probe",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])],
        )
        m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", opset)], ir_version=7)
        so = ort.SessionOptions()
        so.log_severity_level = 4
        try:
            ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
            return True
        except Exception:  # noqa: BLE001
            return False

    lo, hi = 7, onnx.defs.onnx_opset_version() + 3
    if loads(hi):
        return hi
    while hi - lo > 1:  # invariant: loads(lo), not loads(hi)
        mid = (lo + hi) // 2
        if loads(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _tensor_elem_types(tp: onnx.TypeProto) -> list[int]:
    kind = type_kind(tp)
    if kind == "tensor":
        return [tp.tensor_type.elem_type]
    if kind == "sequence":
        return _tensor_elem_types(tp.sequence_type.elem_type)
    if kind == "optional":
        return _tensor_elem_types(tp.optional_type.elem_type)
    if kind == "map":
        return _tensor_elem_types(tp.map_type.value_type)
    return []


@dataclass
class _OrtPrepared:
    session: Any
    fetch: list[str]
    input_types: dict[str, int]
    raw_io: bool
    echo: list[str]
    initializer_names: list[str]
    loaded: LoadedModel
    profile_dir: str | None
    detail: str
    #: what onnxruntime warned while it built the session
    warnings: list[str] = field(default_factory=list)


class OrtBackend(Backend):
    """onnxruntime with a chosen execution-provider priority list."""

    name = "ort"

    def available(self) -> bool:
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            return False
        return True

    @staticmethod
    def available_providers() -> list[str]:
        """What this onnxruntime build offers (``onnxruntime-gpu`` adds CUDA/TensorRT ...)."""
        import onnxruntime as ort

        return list(ort.get_available_providers())

    @classmethod
    def default_providers(cls) -> list[str]:
        """Every local provider the build offers, in onnxruntime's priority order (GPU ones
        first in GPU builds); CPU last so every op has a kernel somewhere.

        NOTE: TensorRT is left out unless named in ``RunOptions.providers``: it builds an
        engine for minutes on a session's first run, which a "Run" click must not do.
        """
        provs = [p for p in cls.available_providers() if p not in _NON_LOCAL_PROVIDERS | _OPT_IN_PROVIDERS]
        if "CPUExecutionProvider" in provs:
            provs.remove("CPUExecutionProvider")
        return provs + ["CPUExecutionProvider"]

    def can_load(self, loaded: LoadedModel, requested: Sequence[str] = (), options: RunOptions | None = None) -> str | None:
        loaded = as_loaded(loaded)
        options = options or RunOptions()
        problem = _requested_problem(loaded, requested)
        if problem:
            return problem
        if options.providers:
            have = self.available_providers()
            for p in options.providers:
                if p not in have:
                    return f"execution provider {p!r} is not in this onnxruntime build (it has {', '.join(have)})"
        opset = loaded.opset("")
        max_opset = _ort_max_opset()
        if opset is not None and opset > max_opset:
            import onnxruntime as ort

            return f"model uses ai.onnx opset {opset}; onnxruntime {ort.__version__} accepts up to {max_opset}"
        g = loaded.proto.graph
        typed = {vi.name: vi for vi in list(g.input) + list(g.output) + list(g.value_info)}
        inits = loaded.scopes.initializers
        for name in [vi.name for vi in g.input if vi.name not in inits] + [vi.name for vi in g.output] + [
            n for n in requested if loaded.scopes.where(n) == "main"
        ]:
            vi = typed.get(name)
            if vi is None:
                continue
            for et in _tensor_elem_types(vi.type):
                if et in SUB_BYTE_TYPES:
                    return (
                        f"value {name!r} is tensor({elem_type_name(et)}): onnxruntime's Python binding "
                        f"cannot pass {elem_type_name(et)} tensors"
                    )
        sub = [n for n in requested if loaded.scopes.where(n) == "subgraph"]
        if sub:
            where = loaded.scopes.subgraph[sub[0]]
            return (
                f"value {sub[0]!r} lives inside subgraph {where}: onnxruntime can only expose "
                "main-graph values without rewriting the control-flow node"
            )
        return None

    def _session_options(self, options: RunOptions, profile_dir: str | None) -> Any:
        import onnxruntime as ort

        so = ort.SessionOptions()
        # Errors come back as exceptions (one line to the user); warnings are logged and
        # caught (editor.runtime.ort_log) to be passed on with the result.
        so.log_severity_level = 2
        if not options.allow_spinning:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        level = _OPT_LEVELS.get(options.graph_optimization_level)
        if level is None:
            raise RuntimeBackendError(
                f"unknown graph optimization level {options.graph_optimization_level!r} ({', '.join(_OPT_LEVELS)})"
            )
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        if options.intra_op_threads:
            so.intra_op_num_threads = options.intra_op_threads
        if options.inter_op_threads:
            so.inter_op_num_threads = options.inter_op_threads
            so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        if profile_dir is not None:
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(profile_dir, "ort_profile")
        return so

    def prepare(self, loaded: LoadedModel, requested: tuple[str, ...], options: RunOptions) -> _OrtPrepared:
        import onnxruntime as ort

        scopes = loaded.scopes
        main_extra = [n for n in requested if scopes.where(n) == "main" and n not in scopes.outputs]
        echo = [n for n in requested if scopes.where(n) == "input"]
        init_names = [n for n in requested if scopes.where(n) == "initializer"]
        profile_dir = tempfile.mkdtemp(prefix="onnx-studio-prof-") if options.profile else None
        so = self._session_options(options, profile_dir)
        providers = list(options.providers) if options.providers else self.default_providers()
        if main_extra:
            derived = expose_outputs(loaded.proto, main_extra)
            base = loaded.source.base_dir
            if loaded.uses_external_data and base:
                # A derived copy is loaded from bytes; tell onnxruntime where the weights are.
                so.add_session_config_entry("session.model_external_initializers_file_folder_path", base)
            model_arg: Any = derived.SerializeToString()
        elif loaded.source.path is None:  # bytes (kept, or serialized again once dropped)
            base = loaded.source.base_dir
            if loaded.uses_external_data and base:
                so.add_session_config_entry("session.model_external_initializers_file_folder_path", base)
            model_arg = loaded.model_bytes()
        else:
            model_arg = loaded.source.path
        with capture_warnings() as log:
            session = ort.InferenceSession(model_arg, so, providers=providers)
        wanted = set(requested) - set(echo) - set(init_names)
        fetch = [o.name for o in session.get_outputs() if o.name in wanted]
        input_types: dict[str, int] = {}
        g = loaded.proto.graph
        for vi in g.input:
            if type_kind(vi.type) == "tensor":
                input_types[vi.name] = vi.type.tensor_type.elem_type
        out_types = [vi.type.tensor_type.elem_type for vi in g.output if type_kind(vi.type) == "tensor"]
        raw_io = any(t in _RAW_TYPES for t in list(input_types.values()) + out_types) or any(
            o.type in ("tensor(bfloat16)",) or "float8" in o.type for o in session.get_outputs()
        )
        return _OrtPrepared(
            session=session,
            fetch=fetch,
            input_types=input_types,
            raw_io=raw_io,
            echo=echo,
            initializer_names=init_names,
            loaded=loaded,
            profile_dir=profile_dir,
            detail=",".join(session.get_providers()),
            warnings=log.warnings,
        )

    def execute(self, prepared: _OrtPrepared, inputs: Mapping[str, Value], options: RunOptions) -> BackendOutput:
        session = prepared.session
        feeds: dict[str, Any] = {}
        for meta in session.get_inputs():
            if meta.name not in inputs:
                raise RuntimeBackendError(f"missing input {meta.name!r} ({meta.type} {meta.shape})")
            feeds[meta.name] = inputs[meta.name]
        start = time.perf_counter()
        with capture_warnings() as log:
            if prepared.raw_io:
                values = self._run_raw(prepared, feeds)
            else:
                results = session.run(prepared.fetch, feeds)
                values = dict(zip(prepared.fetch, results))
        elapsed = time.perf_counter() - start
        values = {k: normalize_value(v) for k, v in values.items()}
        for name in prepared.echo:
            values[name] = normalize_value(inputs[name])
        for name in prepared.initializer_names:
            values[name] = _initializer_value(prepared.loaded, name)
        profile = None
        if prepared.profile_dir is not None:
            path = session.end_profiling()
            try:
                profile = parse_ort_profile(path)
            finally:
                try:
                    os.remove(path)
                    os.rmdir(prepared.profile_dir)
                except OSError:
                    pass
        return BackendOutput(values=values, profile=profile, detail=prepared.detail, run_seconds=elapsed,
                             warnings=list(dict.fromkeys(prepared.warnings + log.warnings)))

    def _run_raw(self, prepared: _OrtPrepared, feeds: dict[str, Any]) -> dict[str, Value]:
        """Run through OrtValues so bfloat16/float8 tensors pass as raw bytes."""
        import onnxruntime as ort

        ort_feeds = {}
        for name, value in feeds.items():
            et = prepared.input_types.get(name)
            arr = np.ascontiguousarray(value) if isinstance(value, np.ndarray) else value
            if et in _RAW_TYPES and isinstance(arr, np.ndarray):
                carrier = np.uint8 if arr.dtype.itemsize == 1 else np.uint16
                ort_feeds[name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(arr.view(carrier), et)
            elif isinstance(arr, np.ndarray):
                ort_feeds[name] = ort.OrtValue.ortvalue_from_numpy(arr)
            else:
                raise RuntimeBackendError(f"input {name!r}: non-tensor values cannot be mixed with bfloat16/float8 tensors")
        outs = prepared.session.run_with_ort_values(prepared.fetch, ort_feeds)
        values: dict[str, Value] = {}
        for name, ov in zip(prepared.fetch, outs):
            et = ov.element_type() if ov.is_tensor() else None
            if et in _RAW_TYPES:
                nbytes = ov.tensor_size_in_bytes()
                raw = np.empty(nbytes, dtype=np.uint8)
                if nbytes:
                    ctypes.memmove(raw.ctypes.data, ov.data_ptr(), nbytes)
                values[name] = raw.view(_RAW_TYPES[et]).reshape(ov.shape())
            else:
                values[name] = ov.numpy()
        return values


# ----------------------------------------------------------------------- reference evaluator


class _CaptureState:
    """Values of requested subgraph names seen while a run is in progress."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.values: dict[str, Value] = {}
        self.counts: dict[str, int] = {}


_ACTIVE_CAPTURE: list[_CaptureState] = []


def _make_capturing_evaluator() -> type:
    from onnx.reference import ReferenceEvaluator

    class CapturingEvaluator(ReferenceEvaluator):
        """ReferenceEvaluator whose nested (subgraph) evaluators record requested values.

        Subgraph evaluators are built with ``evaluator_cls=self.__class__``, so every If/Loop/
        Scan body of a model loaded with this class is one too. When a capture is active,
        a nested run asks for all its intermediate results and keeps the requested ones
        (for a Loop body: the last iteration's value, with a count).
        """

        _own_names: set[str] | None = None

        def run(self, output_names, feed_inputs, attributes=None, intermediate=False, **kwargs):  # type: ignore[override]
            state = _ACTIVE_CAPTURE[-1] if _ACTIVE_CAPTURE else None
            if state is None or intermediate or self.onnx_graph_ is None or getattr(self, "_is_top", False):
                return super().run(output_names, feed_inputs, attributes=attributes, intermediate=intermediate, **kwargs)
            if self._own_names is None:
                self._own_names = {o for n in self.onnx_graph_.node for o in n.output} | {
                    i.name for i in self.onnx_graph_.input
                }
            wanted = state.names & self._own_names
            if not wanted:
                return super().run(output_names, feed_inputs, attributes=attributes, **kwargs)
            results = super().run(None, feed_inputs, attributes=attributes, intermediate=True, **kwargs)
            for name in wanted:
                if name in results:
                    state.values[name] = results[name]
                    state.counts[name] = state.counts.get(name, 0) + 1
            names = self.output_names if output_names is None else output_names
            return [results[n] for n in names]

    return CapturingEvaluator


@dataclass
class _RefPrepared:
    evaluator: Any
    loaded: LoadedModel
    requested: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _onnx_domains() -> frozenset[str]:
    """Operator domains the installed onnx defines (the reference evaluator covers these)."""
    return frozenset({s.domain for s in onnx.defs.get_all_schemas_with_history()} | {"", "ai.onnx"})


class ReferenceBackend(Backend):
    """``onnx.reference.ReferenceEvaluator``: slow, but covers every standard op and type,
    and can capture values inside subgraphs."""

    name = "reference"

    def available(self) -> bool:
        try:
            import onnx.reference  # noqa: F401
        except ImportError:
            return False
        return True

    def can_load(self, loaded: LoadedModel, requested: Sequence[str] = (), options: RunOptions | None = None) -> str | None:
        loaded = as_loaded(loaded)
        problem = _requested_problem(loaded, requested)
        if problem:
            return problem
        if options is not None and options.providers:
            return "execution providers are an onnxruntime option; the reference evaluator runs on the CPU"
        supported = onnx.defs.onnx_opset_version()
        opset = loaded.opset("")
        if opset is not None and opset > supported:
            return f"model uses ai.onnx opset {opset}; onnx {onnx.__version__}'s reference evaluator supports up to {supported}"
        local_funcs = {(f.domain, f.name) for f in loaded.proto.functions}
        known_domains = _onnx_domains()
        for node in loaded.proto.graph.node:
            if node.domain not in known_domains and (node.domain, node.op_type) not in local_funcs:
                return f"no reference implementation for op {node.op_type!r} of domain {node.domain!r}"
        return None

    def prepare(self, loaded: LoadedModel, requested: tuple[str, ...], options: RunOptions) -> _RefPrepared:
        cls = _make_capturing_evaluator()
        evaluator = cls(loaded.full_proto())
        evaluator._is_top = True
        return _RefPrepared(evaluator=evaluator, loaded=loaded, requested=requested)

    def execute(self, prepared: _RefPrepared, inputs: Mapping[str, Value], options: RunOptions) -> BackendOutput:
        scopes = prepared.loaded.scopes
        requested = prepared.requested
        ev = prepared.evaluator
        feeds = {}
        for name in scopes.inputs:
            if name not in inputs:
                raise RuntimeBackendError(f"missing input {name!r}")
            feeds[name] = inputs[name]
        sub = {n for n in requested if scopes.where(n) == "subgraph"}
        needs_all = any(scopes.where(n) in ("main", "initializer") and n not in scopes.outputs for n in requested)
        state = _CaptureState(sub) if sub else None
        if state is not None:
            _ACTIVE_CAPTURE.append(state)
        start = time.perf_counter()
        try:
            if needs_all:
                results = ev.run(None, feeds, intermediate=True)
            else:
                names = [n for n in requested if scopes.where(n) == "main"]
                results = dict(zip(names, ev.run(names, feeds))) if names else {}
        finally:
            if state is not None:
                _ACTIVE_CAPTURE.pop()
        elapsed = time.perf_counter() - start
        values: dict[str, Value] = {}
        missing: dict[str, str] = {}
        for name in requested:
            where = scopes.where(name)
            if where == "input":
                values[name] = normalize_value(inputs[name])
            elif where == "subgraph":
                assert state is not None
                if name in state.values:
                    values[name] = normalize_value(state.values[name])
                else:
                    missing[name] = f"not computed: subgraph {scopes.subgraph[name]} did not run"
            elif name in results:
                values[name] = normalize_value(results[name])
            else:
                missing[name] = "not computed by the reference evaluator"
        out = BackendOutput(values=values, missing=missing, detail=f"onnx {onnx.__version__} reference evaluator", run_seconds=elapsed)
        if state is not None:
            out.detail = (out.detail or "") + "; subgraph values: " + ", ".join(
                f"{n} x{c}" for n, c in sorted(state.counts.items())
            )
        return out


BACKENDS: dict[str, type[Backend]] = {"ort": OrtBackend, "reference": ReferenceBackend}


def backend_by_name(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise RuntimeBackendError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})") from None
