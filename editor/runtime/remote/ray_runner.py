"""Run models on a Ray cluster with the local runner's interface: :class:`RayRunner`.

    runner = RayRunner(ClusterConfig("ray://gpu-box:10001", num_gpus=1))
    result = runner.run("model.onnx", {"x": x}, outputs=["/conv1/Conv_output_0"])

A RayRunner owns one *run host* (:class:`~editor.runtime.remote.host.RunHost`, a Ray actor
pinned to the resources of its :class:`ClusterConfig`) and answers ``run``, ``cancel``,
``release``, ``providers``, ``stats`` and ``close`` exactly as
:class:`editor.runtime.Runner` does, so everything written against the Runner (the run dock,
``compare``, ``reduce``) runs on the cluster unchanged. The host runs the model with the
same child-process Runner, so outputs, intermediate values (the same derived model),
profiles, providers and fallbacks are the local runner's, computed on the cluster node.

What can go wrong, and what the caller gets (a :class:`RunResult`, never a hang):

- the kernel crashes or runs out of memory: the host's child dies, the host reports
  ``crashed`` (SIGFPE, SIGKILL, "out of memory" ...) and stays up for the next run;
- the host itself dies (its node is lost, the worker is killed, Ray's memory monitor
  kills it): ``crashed`` with Ray's reason; the next run starts a new host (the model is
  still in the object store: it is not uploaded again);
- the time limit passes: the host's Runner stops the run; if the host does not answer
  within :data:`GRACE_SECONDS` more, it is killed;
- cancel: the host kills its child; if it does not answer within :data:`GRACE_SECONDS`,
  the host is killed.

:class:`RayPool` gives several runners (hosts) sharing one upload of each model, for the
fan-out of ``compare`` and ``reduce``.
"""

from __future__ import annotations

import math
import os
import threading
import time
from typing import Any, Mapping, Sequence

import onnx

from editor.errors import RuntimeBackendError, StudioError
from editor.runtime.backends import RunOptions
from editor.runtime.remote.config import ClusterConfig, connect
from editor.runtime.remote.host import RunHost
from editor.runtime.remote.shipping import ModelStore, Shipment, external_files
from editor.runtime.result import Attempt, RunResult
from editor.runtime.source import ModelSource
from editor.runtime.values import Value

__all__ = ["GRACE_SECONDS", "RayPool", "RayRunner"]

#: how long a host may take to answer after a time limit or a cancel before it is killed
GRACE_SECONDS = 10.0
#: how long a new host may take to be placed and to answer its first call
START_SECONDS = 120.0
_POLL = 0.25


class _Cancelled(Exception):
    """Cancel arrived while the host was being placed."""


class _HostGone(Exception):
    """The host died or could not be reached (the message says why, without the address)."""


class RayRunner:
    """A run host on a Ray cluster with the :class:`~editor.runtime.Runner` interface."""

    def __init__(self, config: ClusterConfig | None = None, *, store: ModelStore | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.config = config or ClusterConfig.from_env()
        self.store = store or ModelStore()
        self._env = dict(env or {})
        self._actor: Any = None
        self._info: dict[str, Any] = {}
        self._readable: dict[str, bool] = {}
        self._external_names: dict[str, list[str]] = {}
        self._run_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._cancel_flag = False
        self._busy = False
        #: bound on the bytes of models the host's worker caches (None: its default)
        self.cache_bytes: int | None = None

    # -------------------------------------------------------------------- the host
    def start(self) -> None:
        """Connect and place the host now (otherwise the first run does)."""
        with self._state_lock:
            if self._actor is not None:
                return
        ray = connect(self.config.address)
        self._check_resources(ray)
        cls = ray.remote(**self.config.actor_options())(RunHost)
        actor = cls.remote(self._env)
        ping = actor.ping.remote()
        deadline = time.monotonic() + START_SECONDS
        # waiting for a placement (a GPU that is busy) must still answer cancel at once
        while not ray.wait([ping], timeout=_POLL)[0]:
            if self._cancel_flag or time.monotonic() > deadline:
                ray.kill(actor)
                if self._cancel_flag:
                    raise _Cancelled()
                raise RuntimeBackendError(f"no run host could be placed on the cluster within {START_SECONDS:.0f} s "
                                          "(are the resources asked for all taken?)")
        try:
            info = ray.get(ping)
        except Exception as exc:  # noqa: BLE001 - runtime env failure, import error on the node, ...
            ray.kill(actor)
            raise RuntimeBackendError(f"the run host did not start on the cluster: {_ray_reason(exc)}") from None
        with self._state_lock:
            self._actor, self._info, self._readable = actor, info, {}

    def _check_resources(self, ray: Any) -> None:
        total = ray.cluster_resources()
        wanted = {"GPU": self.config.num_gpus, "CPU": self.config.num_cpus, **self.config.resources}
        for name, amount in wanted.items():
            if amount and total.get(name, 0.0) < amount:
                have = total.get(name, 0.0)
                raise RuntimeBackendError(f"the cluster has {have:g} {name} in all and a run host asks for {amount:g}: "
                                          "lower --num-gpus or the resources asked for")

    @property
    def host(self) -> dict[str, Any]:
        """What the host said of itself (node, pid, onnxruntime version, providers)."""
        return dict(self._info)

    @property
    def worker_pid(self) -> int | None:
        return self._info.get("pid") if self._actor is not None else None

    def _drop_actor(self, kill: bool) -> None:
        with self._state_lock:
            actor, self._actor, self._info = self._actor, None, {}
        if actor is not None and kill:
            import ray

            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass

    def close(self) -> None:
        """Stop the host (politely: its child process ends; then the actor)."""
        actor = self._actor
        if actor is None:
            return
        import ray

        if not self._busy:
            try:
                ray.get(actor.close.remote(), timeout=5)
            except Exception:  # noqa: BLE001 - the kill below is what counts
                pass
        self._drop_actor(kill=True)

    def __enter__(self) -> RayRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cancel(self) -> bool:
        """Stop the run in progress (any thread). True if one was running."""
        with self._state_lock:
            if not self._busy:
                return False
            self._cancel_flag = True
        return True

    def release(self, document: str) -> None:
        """Drop ``document``'s uploads and the host's copies (never blocks)."""
        self.store.release(document)
        actor = self._actor
        if actor is not None:
            try:
                actor.release.remote([document])
            except Exception:  # noqa: BLE001 - a dead host holds nothing
                pass

    def wait_released(self, timeout: float = 10.0) -> bool:
        return True

    def providers(self) -> list[str]:
        """Execution providers of onnxruntime on the host's node."""
        with self._run_lock:
            self.start()
            return list(self._info.get("providers", []))

    def stats(self) -> dict[str, Any]:
        import ray

        actor = self._actor
        if actor is None:
            return {}
        try:
            return dict(ray.get(actor.stats.remote(), timeout=30))
        except Exception:  # noqa: BLE001
            return {}

    # -------------------------------------------------------------------- shipping
    def _ask(self, method: Any, *args: Any) -> Any:
        import ray

        try:
            return ray.get(method.remote(*args), timeout=60)
        except Exception as exc:  # noqa: BLE001
            raise _HostGone(_ray_reason(exc)) from None

    def _node_reads(self, path: str) -> bool:
        """Whether the host's node sees ``path`` as this machine does (asked once per file
        version and host)."""
        import os

        try:
            st = os.stat(path)
        except OSError:
            return False
        key = f"{path}:{st.st_size}:{st.st_mtime_ns}"
        known = self._readable.get(key)
        if known is None:
            known = bool(self._ask(self._actor.can_read, path, st.st_size, st.st_mtime_ns))
            self._readable[key] = known
        return known

    def _externals(self, source: ModelSource) -> list[str]:
        """External data files of ``source``, found once per model version (parsing a
        50 MB model for them costs as much as a warm run)."""
        names = self._external_names.get(source.key)
        if names is None:
            names = _externals(source)
            if len(self._external_names) > 64:
                self._external_names.clear()
            self._external_names[source.key] = names
        return names

    def _ship(self, source: ModelSource) -> tuple[Shipment, list[Any]]:
        """How the host gets ``source``: by path, or by one upload (module docstring)."""
        names = self._externals(source)
        if source.is_file and source.path is not None and self._node_reads(source.path):
            if all(self._node_reads(os.path.join(source.base_dir or "", name)) for name in names):
                return Shipment(source.key, source.document, path=source.path), []
        external_dir = None
        if names and source.base_dir is not None and \
                all(self._node_reads(os.path.join(source.base_dir, n)) for n in names):
            external_dir = source.base_dir  # the weights are read in place; only the graph goes
        ref = self.store.put(source, with_external=bool(names) and external_dir is None)
        return Shipment(source.key, source.document, external_dir=external_dir), [ref]

    # ------------------------------------------------------------------------- runs
    def run(
        self,
        model: ModelSource | str | bytes | onnx.ModelProto,
        inputs: Mapping[str, Value],
        *,
        outputs: Sequence[str] | None = None,
        backend: str | None = None,
        order: Sequence[str] | None = None,
        options: RunOptions | None = None,
        timeout: float | None = None,
        debug: str | None = None,
    ) -> RunResult:
        """Run on the cluster (arguments as :meth:`editor.runtime.Runner.run`). Never raises
        for a model's or the cluster's failure: read ``result.status``."""
        options = options or RunOptions()
        if timeout is not None:
            if math.isnan(timeout) or timeout <= 0:
                raise RuntimeBackendError(f"timeout {timeout!r}: give a number of seconds > 0 (or None)")
            if math.isinf(timeout):
                timeout = None
        source = ModelSource.from_any(model)
        start = time.monotonic()
        name = backend or "ort"
        with self._run_lock:
            with self._state_lock:
                self._cancel_flag = False
                self._busy = True
            try:
                try:
                    self.start()
                    shipment, refs = self._ship(source)
                    ref = self._actor.run.remote(shipment, refs, dict(inputs), list(outputs) if outputs else None,
                                                 backend, tuple(order) if order else None, options, timeout, debug,
                                                 self.cache_bytes)
                    result = self._wait(ref, timeout, name)
                except _HostGone as gone:
                    self._drop_actor(kill=True)
                    result = _crashed(name, str(gone))
                except _Cancelled:
                    result = _stopped(name, "cancelled")
                except StudioError as exc:  # no address, no such resources, the host did not start
                    result = RunResult(status="failed", error=f"ray: {exc.message}",
                                       attempts=[Attempt("ray", "unavailable", exc.message)])
                if result.ok:
                    where = self._info.get("host")
                    result.detail = f"{result.detail}; on {where}" if result.detail else f"on {where}"
                result.wall_seconds = time.monotonic() - start
                return result
            finally:
                with self._state_lock:
                    self._busy = False
                    self._cancel_flag = False

    def _wait(self, ref: Any, timeout: float | None, name: str) -> RunResult:
        """The host's answer to ``ref``, or what stopped it (see module docstring)."""
        import ray

        backstop = None if timeout is None else time.monotonic() + timeout + GRACE_SECONDS
        cancel_sent: float | None = None
        while True:
            ready, _ = ray.wait([ref], timeout=_POLL)
            if ready:
                try:
                    return ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - the host died, or Ray failed the call
                    if cancel_sent is not None:
                        return _stopped(name, "cancelled")
                    raise _HostGone(_ray_reason(exc)) from None
            now = time.monotonic()
            if self._cancel_flag and cancel_sent is None:
                cancel_sent = now
                try:
                    self._actor.cancel.remote()
                except Exception:  # noqa: BLE001
                    pass
            if cancel_sent is not None and now - cancel_sent > GRACE_SECONDS:
                self._drop_actor(kill=True)
                return _stopped(name, "cancelled")
            if backstop is not None and now > backstop:
                self._drop_actor(kill=True)
                return _stopped(name, "timeout")


def _externals(source: ModelSource) -> list[str]:
    """External data files of ``source``; a model that cannot be parsed here has none
    (the host's run then reports the parse error, as a local run would)."""
    try:
        return external_files(source)
    except Exception:  # noqa: BLE001
        return []


def _ray_reason(exc: BaseException) -> str:
    """One line of a Ray exception: its kind and the first line of what it says."""
    kind = type(exc).__name__
    text = str(exc).strip()
    hint = ""
    if "OutOfMemory" in kind or "out of memory" in text.lower() or "memory monitor" in text.lower():
        hint = " (out of memory on the node)"
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "ray::")):
            return f"{kind}{hint}: {line}"[:300]
    return f"{kind}{hint}"


def _crashed(name: str, reason: str) -> RunResult:
    message = f"the run host on the cluster died: {reason}"
    return RunResult(status="crashed", error=f"{name}: {message}", attempts=[Attempt(name, "crashed", message)])


def _stopped(name: str, kind: str) -> RunResult:
    what = "cancelled by the user" if kind == "cancelled" else "time limit reached"
    return RunResult(status=kind, error=f"{name}: run {what}", attempts=[Attempt(name, kind, what)])


class RayPool:
    """``size`` run hosts sharing one upload of each model (fan-out of compare/reduce)."""

    def __init__(self, config: ClusterConfig, size: int, *, env: Mapping[str, str] | None = None) -> None:
        if size < 1:
            raise RuntimeBackendError(f"a pool needs at least one host, not {size}")
        self.store = ModelStore()
        self.runners = [RayRunner(config, store=self.store, env=env) for _ in range(size)]

    def start(self) -> None:
        """Place every host at once (their start-ups overlap)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(self.runners)) as ex:
            list(ex.map(lambda r: r.start(), self.runners))

    def close(self) -> None:
        for r in self.runners:
            r.close()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
