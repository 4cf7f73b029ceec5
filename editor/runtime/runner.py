"""Run models in a warm child process, with fallback between backends, time limits and cancel.

    with Runner() as runner:
        result = runner.run("model.onnx", {"x": x})            # ort, else reference
        result = runner.run(path, feeds, backend="reference")   # pinned: no fallback
        result = runner.run(path, feeds, outputs=["/conv1/Conv_output_0"])  # intermediates

The worker process (``multiprocessing`` 'spawn' context: no inherited threads or Qt state)
starts on first use and stays up, caching models and sessions. It dies with the editor,
however the editor ends (see ``worker._die_with_parent``), and runs under a memory limit
(:mod:`editor.runtime.limits`: half the RAM unless told otherwise). A run that crashes it
(signal, exit), overruns ``timeout`` or is cancelled (:meth:`Runner.cancel`, from any thread)
ends with that worker killed and a :class:`RunResult` saying what happened; the next run
starts a fresh worker. A crash of one backend also lets the run fall back to the next one,
as a refusal or an error does, unless the backend was pinned.

Memory: the worker keeps one revision per document (see :mod:`editor.runtime.worker`);
:meth:`Runner.release` drops a document's models and sessions (a closed tab) without
blocking the caller, and ``cache_bytes`` bounds what it keeps (None: a share of the
machine's memory, :func:`editor.runtime.memory.default_cache_bytes`).

NOTE: one run at a time per Runner (a lock serialises them); the editor keeps one Runner
and cancels before starting another run. Cancel kills the worker rather than asking it to
stop: onnxruntime's ``RunOptions.terminate`` only works between kernels and the reference
evaluator has no cancel at all, while killing always works and a warm-up is cheap.
"""

from __future__ import annotations

import dataclasses

import itertools
import math
import multiprocessing as mp
import threading
import time
from multiprocessing.connection import wait
from typing import Any, Mapping, Sequence

import onnx

from editor.errors import RuntimeBackendError
from editor.runtime.backends import BACKENDS, BackendOutput, RunOptions, build_result
from editor.runtime.limits import effective_memory_limit_mb, out_of_memory
from editor.runtime.result import Attempt, RunResult, signal_name
from editor.runtime.shared_values import adopt_values, close_handles
from editor.runtime.source import ModelSource
from editor.runtime.transport import recv_message, send_message
from editor.runtime.values import Value

__all__ = ["DEFAULT_ORDER", "Runner"]

#: fallback order when no backend is pinned
DEFAULT_ORDER: tuple[str, ...] = ("ort", "reference")


class _WorkerDied(Exception):
    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode


class _Stopped(Exception):
    """The wait ended because of a timeout or a cancel (``kind`` says which)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind


class Runner:
    """A warm run worker in a child process (see module docstring)."""

    def __init__(self, *, start_method: str = "spawn") -> None:
        self._ctx = mp.get_context(start_method)
        self._proc: Any = None
        self._conn: Any = None
        self._run_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._cancel_flag = False
        self._busy = False
        self._known_keys: dict[str, str | None] = {}  # model key the worker holds -> its document
        self._ids = itertools.count(1)
        #: bound on the bytes of models the worker caches (None: its default)
        self.cache_bytes: int | None = None
        self._releases: list[str] = []
        self._release_thread: threading.Thread | None = None

    # ------------------------------------------------------------------ worker management
    def start(self, wait: bool = True) -> None:
        """Start the worker now (otherwise the first run does); waits until it answers, unless
        ``wait`` is False: then it starts up while the caller does other work (the CLI loads
        the model meanwhile) and the first request waits for it."""
        with self._state_lock:
            if self._proc is not None and self._proc.is_alive():
                return
            from editor.runtime.worker import worker_main

            parent, child = self._ctx.Pipe(duplex=True)
            # the kernel's parent-death signal follows the thread that starts the worker:
            # ask for it only from the main thread (see worker._die_with_parent)
            death_signal = threading.current_thread() is threading.main_thread()
            proc = self._ctx.Process(target=worker_main, args=(child, death_signal), name="onnx-studio-run-worker",
                                     daemon=True)
            proc.start()
            child.close()
            self._proc, self._conn = proc, parent
            self._known_keys = {}
        if not wait:
            return
        reply = self._request({"op": "ping"}, deadline=time.monotonic() + 120)
        if reply.get("status") != "ok":
            raise RuntimeBackendError(f"run worker did not start: {reply}")

    @property
    def worker_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _kill(self) -> int | None:
        with self._state_lock:
            proc, conn = self._proc, self._conn
            self._proc = self._conn = None
            self._known_keys = {}
            self._releases.clear()  # a dead worker holds nothing
        if proc is None:
            return None
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        if conn is not None:
            conn.close()
        return proc.exitcode

    def close(self) -> None:
        """Stop the worker (politely, then by force)."""
        with self._state_lock:
            proc, conn = self._proc, self._conn
        if proc is not None and proc.is_alive() and not self._busy:
            try:
                send_message(conn, None)
                proc.join(2)
            except (OSError, ValueError):
                pass
        self._kill()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cancel(self) -> bool:
        """Stop the run in progress (safe from any thread). True if one was running."""
        with self._state_lock:
            if not self._busy or self._proc is None:
                return False
            self._cancel_flag = True
            proc = self._proc
        if proc.is_alive():
            proc.kill()  # the waiting thread sees the sentinel and reports 'cancelled'
        return True

    def release(self, document: str) -> None:
        """Drop ``document``'s models and sessions from the worker (a tab closed).

        Never blocks: the request goes from a short-lived thread as soon as no run holds
        the worker, and not at all when no worker is running (nothing is held then)."""
        with self._state_lock:
            if self._proc is None:
                return
            for key in [k for k, doc in self._known_keys.items() if doc == document]:
                del self._known_keys[key]
            if document not in self._releases:
                self._releases.append(document)
            if self._release_thread is not None and self._release_thread.is_alive():
                return
            thread = threading.Thread(target=self._send_releases, name="onnx-studio-run-release", daemon=True)
            self._release_thread = thread
        thread.start()

    def _send_releases(self) -> None:
        with self._run_lock:
            with self._state_lock:
                documents, self._releases = self._releases, []
                alive = self._proc is not None and self._proc.is_alive()
            if documents and alive:
                try:
                    self._request({"op": "forget", "documents": documents}, deadline=time.monotonic() + 30)
                except (_WorkerDied, _Stopped):
                    self._kill()  # a worker that cannot answer this is of no use

    def wait_released(self, timeout: float = 10.0) -> bool:
        """Wait until the releases asked for so far are done (tests, benchmarks)."""
        thread = self._release_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def stats(self) -> dict[str, Any]:
        """What the worker holds: models, sessions, cached bytes, its RSS ({} when none runs)."""
        with self._run_lock:
            if self._proc is None or not self._proc.is_alive():
                return {}
            reply = self._request({"op": "stats"}, deadline=time.monotonic() + 30)
            return {k: v for k, v in reply.items() if k not in ("status", "id")}

    def providers(self) -> list[str]:
        """Execution providers of the worker's onnxruntime build."""
        with self._run_lock:
            self.start()
            return list(self._request({"op": "providers"}, deadline=None).get("providers", []))

    def _request(self, req: dict[str, Any], deadline: float | None, handles: list[int] | None = None) -> dict[str, Any]:
        """Send ``req`` and wait for its reply; descriptors of shared values that come with
        the reply go to ``handles`` (closed when None or when the reply is stale)."""
        conn, proc = self._conn, self._proc
        if conn is None or proc is None:
            raise _WorkerDied(None)
        req = dict(req, id=next(self._ids))
        try:
            send_message(conn, req)
        except (BrokenPipeError, OSError):
            proc.join(5)
            raise _WorkerDied(proc.exitcode) from None
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait([conn, proc.sentinel], timeout=remaining)
            if self._cancel_flag:
                raise _Stopped("cancelled")
            if not ready:
                raise _Stopped("timeout")
            if conn in ready:
                got: list[int] = []
                try:
                    reply = recv_message(conn, got)
                except (EOFError, OSError, RuntimeError):  # RuntimeError: a torn descriptor message
                    close_handles(got)
                    proc.join(5)
                    if self._cancel_flag:
                        raise _Stopped("cancelled") from None
                    raise _WorkerDied(proc.exitcode) from None
                if reply.get("id") == req["id"] and handles is not None:
                    handles.extend(got)
                else:
                    close_handles(got)
                if reply.get("id") == req["id"]:
                    return reply
                continue  # a stale reply; keep waiting
            proc.join(5)
            if self._cancel_flag:
                raise _Stopped("cancelled")
            raise _WorkerDied(proc.exitcode)

    # ----------------------------------------------------------------------------- runs
    def run(
        self,
        model: ModelSource | str | bytes | onnx.ModelProto,
        inputs: Mapping[str, Value],
        *,
        outputs: Sequence[str] | None = None,
        backend: str | None = None,
        order: Sequence[str] = DEFAULT_ORDER,
        options: RunOptions | None = None,
        timeout: float | None = None,
        debug: str | None = None,
        spill_dir: str | None = None,
    ) -> RunResult:
        """Run ``model`` on ``inputs`` in the worker.

        ``backend`` pins one backend (no fallback); otherwise ``order`` is tried in turn.
        ``outputs``: names to produce (graph outputs and/or intermediates, also inside
        subgraphs); None = the graph outputs. ``timeout`` covers the whole run, fallbacks
        included. Never raises for a model's failure: read ``result.status``.

        Big tensors come back mapped from nameless shared files (:mod:`shared_values`);
        ``spill_dir``: a folder on the file system the values will be saved to, so that
        ``result.value_files[name].link_to(path)`` saves one without writing it again.
        """
        options = options or RunOptions()
        if timeout is not None:
            if math.isnan(timeout) or timeout <= 0:
                raise RuntimeBackendError(f"timeout {timeout!r}: give a number of seconds > 0 (or None)")
            if math.isinf(timeout):
                timeout = None
        source = ModelSource.from_any(model)
        names = [backend] if backend else list(order)
        for name in names:
            if name not in BACKENDS:
                raise RuntimeBackendError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
        pinned = backend is not None
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        attempts: list[Attempt] = []
        with self._run_lock:
            with self._state_lock:
                self._cancel_flag = False
                self._busy = True
            try:
                for name in names:
                    # providers are onnxruntime's option: when falling back, the other
                    # backends run without them instead of refusing the run
                    opts = options if pinned or name == "ort" else dataclasses.replace(options, providers=None)
                    outcome = self._attempt(name, source, inputs, outputs, opts, deadline, debug, spill_dir)
                    if isinstance(outcome, RunResult):  # timeout / cancel: stop here
                        outcome.attempts[:0] = attempts
                        outcome.wall_seconds = time.monotonic() - start
                        return outcome
                    status, reason, reply = outcome
                    if status == "ok":
                        attempts.append(Attempt(name, "ran"))
                        files = adopt_values(reply["values"], reply.pop("_handles"), keep=spill_dir is not None)
                        out = BackendOutput(
                            values=reply["values"],
                            missing=reply["missing"],
                            profile=reply["profile"],
                            detail=reply["detail"],
                            run_seconds=reply["run_seconds"],
                            warnings=reply.get("warnings", []),
                        )
                        result = build_result(name, reply["roles"], out, attempts, time.monotonic() - start)
                        result.value_files = files
                        return result
                    attempts.append(Attempt(name, status, reason))
                    if pinned or (reason or "").startswith("out of memory"):
                        break  # another backend would hit the same memory limit
            finally:
                with self._state_lock:
                    self._busy = False
                    self._cancel_flag = False
        last = attempts[-1]
        result = RunResult(status="crashed" if last.status == "crashed" else "failed", attempts=attempts,
                           wall_seconds=time.monotonic() - start)
        if len(attempts) == 1:
            result.error = f"{last.backend}: {last.reason}"
        else:
            result.error = "no backend could run the model: " + "; ".join(f"{a.backend}: {a.reason}" for a in attempts)
        crash = next((a for a in reversed(attempts) if a.status == "crashed"), None)
        if crash is not None and self._last_exit is not None:
            result.signal, result.exit_code = self._last_exit
        return result

    _last_exit: tuple[str | None, int | None] | None = None

    def _attempt(
        self,
        name: str,
        source: ModelSource,
        inputs: Mapping[str, Value],
        outputs: Sequence[str] | None,
        options: RunOptions,
        deadline: float | None,
        debug: str | None,
        spill_dir: str | None = None,
    ) -> tuple[str, str | None, dict[str, Any]] | RunResult:
        try:
            if self._proc is None or not self._proc.is_alive():
                self._kill()
                self.start()
            send_source = source.without_data() if source.key in self._known_keys else source
            req = {
                "op": "run",
                "backend": name,
                "source": send_source,
                "inputs": dict(inputs),
                "outputs": list(outputs) if outputs else None,
                "options": options,
                "debug": debug,
                "cache_bytes": self.cache_bytes,
                "spill_dir": spill_dir,
            }
            handles: list[int] = []
            reply = self._request(req, deadline, handles)
            if reply.get("status") == "need_model":
                req["source"] = source
                reply = self._request(req, deadline, handles)
            reply["_handles"] = handles
            if source.document is not None:  # the worker replaced older revisions with this one
                for key in [k for k, doc in self._known_keys.items() if doc == source.document]:
                    del self._known_keys[key]
            self._known_keys[source.key] = source.document
        except _Stopped as stop:
            self._kill()
            what = "cancelled by the user" if stop.kind == "cancelled" else "time limit reached"
            return RunResult(status=stop.kind, attempts=[Attempt(name, stop.kind, what)], error=f"{name}: run {what}")
        except _WorkerDied as died:
            code = died.exitcode
            self._kill()
            limit = effective_memory_limit_mb(options.memory_limit_mb)
            # a native allocation failing under the limit aborts (glibc, C++ bad_alloc) or
            # exits instead of raising; the OOM killer sends SIGKILL
            maybe_oom = f" (possibly {out_of_memory(limit)})"
            if code is not None and code < 0:
                sig = signal_name(-code)
                hint = maybe_oom if sig in ("SIGKILL", "SIGABRT") else ""
                reason = f"worker process died with {sig}{hint}"
                self._last_exit = (sig, code)
            else:
                # 127: glibc's exit when it cannot allocate a new thread's memory
                hint = maybe_oom if limit and code == 127 else ""
                reason = f"worker process exited with code {code}{hint}"
                self._last_exit = (None, code)
            return ("crashed", reason, {})
        status = reply.get("status")
        if status == "ok":
            return ("ok", None, reply)
        close_handles(reply.pop("_handles"))  # only a result has values
        reason = reply.get("reason") or "unknown error"
        if status == "skip":
            return ("skipped", reason, reply)
        if status == "unavailable":
            return ("unavailable", reason, reply)
        stage = reply.get("stage")
        if stage == "load":
            reason = f"cannot create a session: {reason}"
        return ("failed", reason, reply)
