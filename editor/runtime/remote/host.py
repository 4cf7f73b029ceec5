"""The run host: what runs on a cluster node, inside one Ray actor.

A host holds a local :class:`~editor.runtime.Runner`, i.e. the same warm child process the
editor uses on the desk: a kernel that dies of SIGFPE, the OOM killer or a memory limit
takes that child, not the actor, so the crash comes back as the same ``crashed`` result a
local run gives and the host (with the models it holds) stays up for the next run. Time
limits and cancel kill the child too; the actor itself is killed only as a last resort
(see :mod:`editor.runtime.remote.ray_runner`).

The host keeps the models it was sent (one revision per document, a few documents), so a
model crosses the network once: later runs send its key and the same object reference,
which the host does not fetch again. A model the host's node can read at the same path
with the same size and modification time is not sent at all.

NOTE: Ray calls these methods on a small thread pool (``max_concurrency``), so ``cancel``
and ``stats`` are answered while ``run`` holds the Runner; everything they touch is
thread-safe (the Runner's own locks, a lock around the model table).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from typing import Any, Mapping, Sequence

from editor.runtime.remote.shipping import Shipment, materialize

__all__ = ["RunHost"]

#: documents whose model a host keeps (the driver's own store bounds the object store)
MAX_MODELS = 6


class RunHost:
    """One run host (instantiated by Ray as an actor; plain Python otherwise)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        from editor.runtime.runner import Runner

        # test hooks and the like, passed to the child the Runner starts
        for k, v in (env or {}).items():
            os.environ[k] = v
        self.runner = Runner()
        # the child process starts with the host, not on its first run: a pool's hosts
        # start side by side, and the first check of a reduce does not pay for it
        self.runner.start()
        self._lock = threading.Lock()
        self._models: OrderedDict[str, Any] = OrderedDict()  # key -> local ModelSource
        self._dir = tempfile.mkdtemp(prefix="onnx-studio-ray-")

    # ------------------------------------------------------------------------- facts
    def ping(self) -> dict[str, Any]:
        """Who answers: node, process, onnxruntime version and providers of this node."""
        import socket

        info: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname()}
        try:
            import ray

            ctx = ray.get_runtime_context()
            info["node_id"] = ctx.get_node_id()
            info["gpu_ids"] = [str(g) for g in ray.get_gpu_ids()]
        except Exception:  # noqa: BLE001 - outside Ray (tests of the class itself)
            pass
        try:
            import onnxruntime

            info["onnxruntime"] = onnxruntime.__version__
            info["providers"] = list(onnxruntime.get_available_providers())
        except ImportError:
            info["onnxruntime"] = None
            info["providers"] = []
        return info

    def can_read(self, path: str, size: int, mtime_ns: int) -> bool:
        """Whether this node sees the file at ``path`` as the driver does (same size and
        modification time: a shared or synced file system)."""
        try:
            st = os.stat(path)
        except OSError:
            return False
        return st.st_size == size and st.st_mtime_ns == mtime_ns and os.access(path, os.R_OK)

    def providers(self) -> list[str]:
        return self.runner.providers()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            held = len(self._models)
        return {"host_models": held, **self.runner.stats()}

    # -------------------------------------------------------------------------- runs
    def _source(self, shipment: Shipment, refs: Sequence[Any]) -> Any:
        """The local ModelSource of ``shipment``: cached, or fetched once from the object store."""
        with self._lock:
            source = self._models.get(shipment.key)
            if source is not None:
                self._models.move_to_end(shipment.key)
                return source
        if shipment.path is not None:  # read in place on this node
            source = shipment.local_source()
        else:
            import ray

            bundle = ray.get(refs[0])
            source = materialize(shipment, bundle, self._dir)
        with self._lock:
            if shipment.document is not None:
                for key in [k for k, s in self._models.items() if s.document == shipment.document]:
                    self._drop(key)
            self._models[shipment.key] = source
            while len(self._models) > MAX_MODELS:
                self._drop(next(iter(self._models)))
        return source

    def _drop(self, key: str) -> None:
        source = self._models.pop(key, None)
        if source is not None and source.path is not None and source.path.startswith(self._dir + os.sep):
            shutil.rmtree(os.path.dirname(source.path), ignore_errors=True)

    def run(self, shipment: Shipment, refs: Sequence[Any], inputs: Mapping[str, Any], outputs: Sequence[str] | None,
            backend: str | None, order: Sequence[str] | None, options: Any, timeout: float | None,
            debug: str | None, cache_bytes: int | None) -> Any:
        """Run on this node's child-process Runner; a :class:`RunResult` whatever happens."""
        from editor.errors import StudioError
        from editor.runtime.result import Attempt, RunResult

        try:
            source = self._source(shipment, refs)
        except StudioError as exc:
            return RunResult(status="failed", error=f"{backend or 'ort'}: cannot create a session: {exc.message}",
                             attempts=[Attempt(backend or "ort", "failed", exc.message)])
        self.runner.cache_bytes = cache_bytes
        kwargs: dict[str, Any] = {"outputs": outputs, "options": options, "timeout": timeout, "debug": debug}
        if backend is not None:
            kwargs["backend"] = backend
        if order:
            kwargs["order"] = tuple(order)
        result = self.runner.run(source, inputs, **kwargs)
        result.close_files()  # shared-file descriptors stay on this node; the values travel
        return result

    def cancel(self) -> bool:
        return self.runner.cancel()

    def release(self, documents: Sequence[str]) -> None:
        with self._lock:
            for key in [k for k, s in self._models.items() if s.document in documents]:
                self._drop(key)
        for document in documents:
            self.runner.release(document)

    def close(self) -> None:
        self.runner.close()
        shutil.rmtree(self._dir, ignore_errors=True)
