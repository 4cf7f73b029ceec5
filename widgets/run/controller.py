"""Running the open model from the GUI without blocking it.

:class:`RunService` (one per main window) owns the runtime's :class:`~editor.runtime.Runner`
(a warm child process) and runs each request on a :class:`RunThread`; Cancel calls
``Runner.cancel`` from the GUI thread, which kills the worker, so a hung kernel stops at
once. :class:`RunController` (one per document tab) turns the tab's document, its input
panel and the chosen settings into a request, keeps the last :class:`RunResult` and answers
``value(name)`` for the canvas and the panels.

NOTE: the model sent to the worker is the file itself while the document is unchanged and
stored as binary ONNX (the worker caches it by path, size and mtime); an edited, text-format
or unsaved document is sent as its serialized bytes under a key that changes with every
edit, with the file's folder as the external-data folder. The document is never changed:
intermediate values come from the runtime's derived copy (``expose_outputs``) in the worker.

NOTE: the runtime passes one ``RunOptions`` to every backend of a fallback chain, and the
reference evaluator refuses a run that names execution providers. When the user picked a
provider list but left the backend on automatic, the service therefore runs onnxruntime
pinned with the providers and, if that fails, the reference evaluator pinned without them,
and merges the two attempts into one result.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QThread, Signal

from editor.errors import StudioError
from editor.runtime import ModelSource, Runner, RunOptions, RunResult
from editor.runtime.intermediates import value_scopes
from editor.runtime.profiling import main_profile_names
from editor.runtime.result import Attempt


@dataclass(frozen=True)
class RunSettings:
    """What the options panel says about the next run."""

    #: 'auto' (onnxruntime, then the reference evaluator), 'ort' or 'reference'
    backend: str = "auto"
    #: onnxruntime providers in priority order; None = the build's default order
    providers: tuple[str, ...] | None = None
    optimization: str = "all"
    intra_threads: int = 0
    inter_threads: int = 0
    #: seconds; 0 = no limit
    timeout: float = 0.0
    memory_limit_mb: int = 0
    #: 'outputs', 'selected' or 'all' (every main-graph value)
    capture: str = "outputs"
    #: profile runs use level 'basic' so the times map to the user's nodes (no fusions)
    profile_unfused: bool = True
    #: MB of models the run worker keeps warm; 0 = its default (a share of this machine's memory)
    cache_mb: int = 0


@dataclass
class RunRequest:
    source: ModelSource
    feeds: dict[str, Any]
    outputs: list[str] | None = None
    backend: str | None = None
    options: RunOptions = field(default_factory=RunOptions)
    timeout: float | None = None
    #: a test hook of the runtime worker (honoured only with its environment variable)
    debug: str | None = None
    #: providers only onnxruntime should see (see the module NOTE)
    auto_providers: tuple[str, ...] | None = None
    #: bound on the bytes of models the worker keeps (None: its default)
    cache_bytes: int | None = None
    #: run on the remote backend of the Backends settings (a Ray cluster), not this machine
    remote: bool = False


def execute(runner: Runner, req: RunRequest) -> RunResult:
    """Run ``req`` on ``runner`` (blocking; called on a RunThread)."""
    kwargs = dict(outputs=req.outputs, timeout=req.timeout, debug=req.debug)
    runner.cache_bytes = req.cache_bytes
    if req.auto_providers is None:
        return runner.run(req.source, req.feeds, backend=req.backend, options=req.options, **kwargs)
    start = time.monotonic()
    ort_opts = replace(req.options, providers=req.auto_providers)
    first = runner.run(req.source, req.feeds, backend="ort", options=ort_opts, **kwargs)
    if first.ok or first.status in ("cancelled", "timeout"):
        return first
    if req.timeout is not None:
        left = req.timeout - (time.monotonic() - start)
        if left <= 0:
            first.status = "timeout"
            return first
        kwargs["timeout"] = left
    second = runner.run(req.source, req.feeds, backend="reference", options=req.options, **kwargs)
    second.attempts[:0] = first.attempts
    if not second.ok and second.error:
        second.error = "no backend could run the model: " + "; ".join(
            f"{a.backend}: {a.reason}" for a in second.attempts)
    second.wall_seconds = time.monotonic() - start
    return second


class RunThread(QThread):
    """One run off the GUI thread; ``done(result)`` arrives on the GUI thread."""

    done = Signal(object)

    def __init__(self, runner: Runner, request: RunRequest, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.request = request
        self.result: RunResult | None = None

    def run(self) -> None:  # noqa: D102 - QThread entry point
        try:
            self.result = execute(self.runner, self.request)
            # statistics of every tensor here, off the GUI thread: the results table asks
            # for all of them at once, and "every value" of a big model is a lot of numbers
            for record in self.result.outputs.values():
                _ = record.stats
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the thread silently
            self.result = RunResult(status="failed", error=f"{type(exc).__name__}: {exc}",
                                    attempts=[Attempt("?", "failed", str(exc))])
        self.done.emit(self.result)


class ProvidersThread(QThread):
    done = Signal(list)

    def __init__(self, runner: Runner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner

    def run(self) -> None:  # noqa: D102
        try:
            providers = self.runner.providers()
        except Exception:  # noqa: BLE001 - the list just stays empty
            providers = []
        self.done.emit(providers)


class RunService(QObject):
    """The window's run worker: one run at a time (see module docstring)."""

    busyChanged = Signal(bool)
    providersKnown = Signal(list)
    #: the cluster's onnxruntime providers (the remote backend's), when first known
    remoteProvidersKnown = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = Runner()
        #: the Ray cluster's run host, made on the first remote run (widgets.run.remote)
        self.remote_runner: Any = None
        self._active: Any = self.runner
        self._thread: RunThread | None = None
        self._providers: list[str] | None = None
        self._providers_thread: ProvidersThread | None = None
        self._remote_providers: list[str] | None = None
        self._remote_providers_thread: ProvidersThread | None = None
        self.owner: RunController | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def providers(self) -> list[str] | None:
        """The worker's providers if known; else asks for them (``providersKnown`` later)."""
        if self._providers is None and self._providers_thread is None and self._thread is None:
            thread = ProvidersThread(self.runner, self)
            thread.done.connect(self._on_providers)
            self._providers_thread = thread
            thread.start()
        return self._providers

    def remote_providers(self) -> list[str] | None:
        """The cluster host's providers if known; else asks (``remoteProvidersKnown`` later;
        an empty list when the cluster cannot be reached)."""
        if self._remote_providers is None and self._remote_providers_thread is None:
            try:
                runner = self._remote()
            except StudioError:  # a bad cluster setting: the list stays empty
                return None
            thread = ProvidersThread(runner, self)
            thread.done.connect(self._on_remote_providers)
            self._remote_providers_thread = thread
            thread.start()
        return self._remote_providers

    def _on_remote_providers(self, providers: list) -> None:
        if self._remote_providers_thread is not None:
            self._remote_providers_thread.wait()
            self._remote_providers_thread = None
        self._remote_providers = list(providers) if providers else None  # unreachable: ask again later
        self.remoteProvidersKnown.emit(list(providers))

    def _on_providers(self, providers: list) -> None:
        if self._providers_thread is not None:
            self._providers_thread.wait()
            self._providers_thread = None
        self._providers = list(providers)
        self.providersKnown.emit(self._providers)

    def submit(self, request: RunRequest, owner: RunController) -> RunThread:
        if self._thread is not None:
            raise StudioError("a run is already in progress")
        # NOTE: a providers query still in flight is not waited for here (that could be a
        # worker start on the GUI thread): the Runner's own lock puts the run after it
        runner = self._runner_for(request)
        self._active = runner
        thread = RunThread(runner, request, self)
        thread.done.connect(self._on_done)
        self._thread = thread
        self.owner = owner
        thread.start()
        self.busyChanged.emit(True)
        return thread

    def _on_done(self, result: RunResult) -> None:
        thread, owner = self._thread, self.owner
        self._thread = None
        self.owner = None
        if thread is not None:
            thread.wait()
            thread.deleteLater()
        self.busyChanged.emit(False)
        if owner is not None and shiboken6.isValid(owner):  # its tab may have closed meanwhile
            owner._finish(result)

    def _runner_for(self, request: RunRequest) -> Any:
        return self._remote() if request.remote else self.runner

    def _remote(self) -> Any:
        """The cluster's runner, made from the Backends settings on first use."""
        if self.remote_runner is None:
            from editor.runtime.remote import RayRunner
            from widgets.run.remote import cluster_config

            self.remote_runner = RayRunner(cluster_config())
        return self.remote_runner

    def reset_remote(self) -> None:
        """The Backends settings changed: the next remote run connects anew."""
        if self._remote_providers_thread is not None:
            self._remote_providers_thread.wait(30_000)
        self._remote_providers = None
        runner, self.remote_runner = self.remote_runner, None
        if runner is not None:
            if self._active is runner:
                runner.cancel()
            runner.close()

    def cancel(self) -> bool:
        """Stop the run in progress (kills the worker; the next run starts a fresh one)."""
        return self._thread is not None and self._active.cancel()

    def release(self, controller: RunController) -> None:
        """A tab closed: the worker drops its models and sessions (in the background)."""
        if self.owner is controller:
            self._active.cancel()  # its run's result has nowhere to go
        for runner in (self.runner, self.remote_runner):
            if runner is not None:
                runner.release(controller.document_key)

    def shutdown(self) -> None:
        """Cancel any run and stop the worker process (window closing)."""
        if self._thread is not None:
            self._active.cancel()
            self._thread.wait(10_000)
        for thread in (self._providers_thread, self._remote_providers_thread):
            if thread is not None:
                thread.wait(10_000)
        self.runner.close()
        if self.remote_runner is not None:
            self.remote_runner.close()


_keys = itertools.count(1)


class RunController(QObject):
    """Runs of one document tab and their last result (see module docstring)."""

    started = Signal()
    #: the run ended (any status); the RunResult
    finished = Signal(object)
    #: the model's inputs changed (the input panel was rebuilt)
    inputsChanged = Signal()

    def __init__(self, tab, service: RunService, input_panel=None) -> None:
        super().__init__(tab)
        from widgets.run.inputs_panel import InputPanel

        self.tab = tab
        self.doc = tab.doc
        self.service = service
        self.input_panel = input_panel or InputPanel()
        self.last_result: RunResult | None = None
        #: True when the document changed after the last run
        self.stale = False
        self.last_settings: RunSettings | None = None
        #: a failed run after a good one (the good values stay shown)
        self.last_failure: RunResult | None = None
        self.last_profiled = False
        #: input shapes of the run that gave ``last_result`` (to check declared output shapes)
        self.last_feed_shapes: dict[str, tuple[int, ...]] = {}
        self._pending_feed_shapes: dict[str, tuple[int, ...]] = {}
        self._session = uuid.uuid4().hex[:12]
        self._revision = 0
        self._inputs_sig = self._input_signature()
        self.input_panel.set_model(self.doc.model, self.model_key())
        self.doc.changed.connect(self._on_doc_changed)

    # -- the model -------------------------------------------------------------------------
    def model_key(self) -> str | None:
        """What symbolic-dim memory is keyed by: the model's path (None when unsaved)."""
        return str(self.doc.path.resolve()) if self.doc.path is not None else None

    def model_source(self) -> ModelSource:
        doc = self.doc
        store = getattr(doc, "store", None)
        base = getattr(store, "base_dir", None) if store is not None else None
        base = str(base) if base else None
        if (doc.path is not None and not doc.is_modified and doc.format == "binary" and doc.path.is_file()
                and (base is None or Path(base) == doc.path.resolve().parent)):
            return ModelSource.from_path(doc.path, document=self.document_key)
        if base is None and doc.path is not None:
            base = str(doc.path.parent)
        key = f"{self.document_key}:{self._revision}"
        return ModelSource.from_bytes(doc.serialize(), key, base_dir=base, document=self.document_key)

    @property
    def document_key(self) -> str:
        """What the worker files this tab's models under: each run's model replaces the
        older revision, and closing the tab releases them (``RunService.release``)."""
        return f"doc:{self._session}"

    def _input_signature(self) -> bytes:
        return b"".join(vi.SerializeToString() for vi in self.doc.model.graph.input)

    def _on_doc_changed(self, changes) -> None:
        self._revision = next(_keys)
        self.input_panel.model_edited()
        if self.last_result is not None:
            self.stale = True
        if not (changes.scope_fields or changes.items or changes.lists_reshaped or changes.values_renamed
                or changes.structure or changes.graph_replaced):
            return  # only nodes or model fields changed: the graph's inputs are as they were
        sig = self._input_signature()
        if sig != self._inputs_sig:
            self._inputs_sig = sig
            self.input_panel.set_model(self.doc.model, self.model_key())
            self.inputsChanged.emit()

    # -- values ------------------------------------------------------------------------------
    def value(self, name: str):
        """The value ``name`` had in the last successful run, or None if it was not captured."""
        record = self.record(name)
        return None if record is None else record.value

    def record(self, name: str):
        result = self.last_result
        if result is None or not result.ok:
            return None
        return result.outputs.get(name)

    def captured_names(self) -> list[str]:
        result = self.last_result
        return list(result.outputs) if result is not None and result.ok else []

    def selected_value_names(self) -> list[str]:
        """Values the canvas selection stands for: a node's outputs, a value, a tensor."""
        names: list[str] = []
        doc = self.doc
        for target in self.tab.selection.targets:
            if target.kind == "node" and target.node is not None and doc.has_node(target.node):
                names += [o for o in doc.node(target.node).output if o]
            elif target.kind in ("value", "tensor") and target.name:
                names.append(target.name)
        return list(dict.fromkeys(names))

    def requested_outputs(self, capture: str) -> list[str] | None:
        if capture == "outputs":
            return None
        graph_outputs = [o.name for o in self.doc.model.graph.output]
        if capture == "all":
            extra = value_scopes(self.doc.model).main
        else:
            extra = self.selected_value_names()
        names = list(dict.fromkeys(graph_outputs + extra))
        return names if len(names) > len(graph_outputs) else None

    # -- running -----------------------------------------------------------------------------
    def build_request(self, settings: RunSettings, *, profile: bool = False, debug: str | None = None) -> RunRequest:
        """Inputs, model and options for a run; raises StudioError for a bad input."""
        feeds = self.input_panel.feeds()
        level = settings.optimization
        if profile and settings.profile_unfused and level in ("extended", "layout", "all"):
            level = "basic"
        options = RunOptions(
            graph_optimization_level=level,
            intra_op_threads=settings.intra_threads,
            inter_op_threads=settings.inter_threads,
            profile=profile,
            memory_limit_mb=settings.memory_limit_mb or None,
        )
        from widgets.run.remote import is_remote

        remote = is_remote(settings.backend)
        backend = None if settings.backend == "auto" or remote else settings.backend
        auto_providers = None
        if settings.providers:
            if backend == "ort":
                options = replace(options, providers=settings.providers)
            elif backend is None:
                auto_providers = settings.providers
        if profile and backend is None and auto_providers is None:
            backend = "ort"  # only onnxruntime profiles; a fallback would give no times
        return RunRequest(
            source=self.model_source(),
            feeds=feeds,
            outputs=self.requested_outputs(settings.capture),
            backend=backend,
            options=options,
            timeout=settings.timeout or None,
            debug=debug,
            auto_providers=auto_providers,
            cache_bytes=settings.cache_mb * 1024 * 1024 if settings.cache_mb else None,
            remote=remote,
        )

    def run(self, settings: RunSettings, *, profile: bool = False, debug: str | None = None) -> RunThread:
        """Start a run in the background; ``finished`` follows. Raises StudioError when the
        inputs cannot be made or another run is in progress."""
        request = self.build_request(settings, profile=profile, debug=debug)
        thread = self.service.submit(request, self)
        self._pending_feed_shapes = {n: tuple(v.shape) for n, v in request.feeds.items() if hasattr(v, "shape")}
        self.last_settings = settings
        self.last_profiled = profile
        self.started.emit()
        return thread

    def cancel(self) -> bool:
        return self.service.owner is self and self.service.cancel()

    @property
    def running(self) -> bool:
        return self.service.owner is self

    def _finish(self, result: RunResult) -> None:
        if result.ok or self.last_result is None or not self.last_result.ok:
            self.last_result = result
            self.last_feed_shapes = self._pending_feed_shapes
            self.last_failure = None
            self.stale = False
        else:
            # keep the last good values around for the canvas; report the failure anyway
            self.last_failure = result
        self.finished.emit(result)

    def profile_times(self) -> dict[str, float]:
        """Node name -> microseconds from the last profiled run ({} if none)."""
        result = self.last_result
        if result is None or not result.ok or not result.profile:
            return {}
        return {name: t.microseconds for name, t in result.profile.items()}

    def profile_by_node_id(self) -> dict[int, float]:
        """Main-scope node id -> microseconds, for the profile entries that name a node of
        the document (fused or generated kernels of onnxruntime have no such node)."""
        times = self.profile_times()
        out: dict[int, float] = {}
        names = main_profile_names(self.doc)
        for sid, nid, node in self.doc.index.iter_nodes():
            name = names.get(nid, node.name)
            if name and name in times:
                out[nid] = out.get(nid, 0.0) + times[name]
        return out



def describe_failure(result: RunResult) -> str:
    """One or two sentences for the user about a run that did not succeed."""
    if result.status == "cancelled":
        return "Run cancelled."
    if result.status == "timeout":
        return "Time limit reached: the run was stopped. " + (result.error or "")
    if result.status == "crashed":
        what = result.signal or (f"exit code {result.exit_code}" if result.exit_code is not None else "a crash")
        return (f"The run worker crashed ({what}); the editor is unaffected and the next run starts a fresh "
                f"worker. {result.error or ''}").strip()
    return f"The run failed: {result.error or result.status}"
