"""The run worker: a child process that loads models, keeps sessions warm, and runs them.

The parent (:class:`editor.runtime.runner.Runner`) sends one request per backend attempt;
the worker answers ``ok`` with the values, ``skip`` (the backend's ``can_load`` refused),
``error`` (session creation or the run raised), or ``need_model`` (the parent sent only the
key of a bytes model the worker no longer caches). Anything worse — a kernel that raises
SIGFPE/SIGSEGV, the OOM killer, a hang — kills or stalls only this process; the parent sees
that and reports it.

Sessions are cached by (model key, backend, session options, requested values) in a small
LRU, so repeated runs of the same model pay neither process start nor session creation.

NOTE: test hooks. With ``ONNX_STUDIO_RUNTIME_TEST_HOOKS=1`` in the worker's environment a
request may carry ``debug`` = '[backend:]sigfpe' | 'sigsegv' | 'sigkill' | 'exit' | 'hang' | 'oom' to simulate a
crashing kernel, a native exit, a hang or a runaway allocation deterministically. Without the
variable the field is ignored, so a user's run can never trigger them.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
import warnings
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["worker_main"]

_HOOKS_ENV = "ONNX_STUDIO_RUNTIME_TEST_HOOKS"
_MAX_SESSIONS = 6
_MAX_MODELS = 6


def _debug_action(action: str) -> None:
    if os.environ.get(_HOOKS_ENV) != "1":
        return
    if action == "sigfpe":
        os.kill(os.getpid(), signal.SIGFPE)
    elif action == "sigsegv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == "sigkill":  # what the kernel's OOM killer does
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "exit":
        os._exit(3)
    elif action == "hang":
        while True:
            time.sleep(1)
    elif action == "oom":
        hog = []
        while True:  # until MemoryError (under a memory limit) or the OOM killer
            hog.append(bytearray(256 * 1024 * 1024))


class _Worker:
    def __init__(self) -> None:
        from editor.runtime.backends import BACKENDS

        self.backends = {name: cls() for name, cls in BACKENDS.items()}
        try:
            import onnxruntime

            # Session-creation errors come back as exceptions and reach the user as one
            # line; onnxruntime's own console log of them is noise in the editor's terminal.
            onnxruntime.set_default_logger_severity(4)
        except ImportError:
            pass
        self.models: OrderedDict[str, Any] = OrderedDict()
        self.sessions: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def _model(self, source: Any) -> Any:
        from editor.runtime.backends import LoadedModel

        loaded = self.models.get(source.key)
        if loaded is not None:
            self.models.move_to_end(source.key)
            return loaded
        if source.data is None and source.path is None:
            return None
        loaded = LoadedModel.from_source(source)
        self.models[source.key] = loaded
        while len(self.models) > _MAX_MODELS:
            old_key, _ = self.models.popitem(last=False)
            for k in [k for k in self.sessions if k[0] == old_key]:
                del self.sessions[k]
        return loaded

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "ping":
            return {"status": "ok", "pid": os.getpid()}
        if op == "providers":
            ort = self.backends["ort"]
            return {"status": "ok", "providers": ort.available_providers() if ort.available() else []}
        if op != "run":
            return {"status": "error", "reason": f"unknown request {op!r}"}
        return self._run(req)

    def _run(self, req: dict[str, Any]) -> dict[str, Any]:
        from editor.errors import StudioError
        from editor.runtime.backends import clean_message, value_roles

        backend = self.backends[req["backend"]]
        options = req["options"]
        try:
            loaded = self._model(req["source"])
        except StudioError as exc:
            return {"status": "error", "stage": "load", "reason": exc.message}
        if loaded is None:
            return {"status": "need_model"}
        requested = tuple(req["outputs"]) if req.get("outputs") else tuple(loaded.scopes.outputs)
        if not backend.available():
            return {"status": "unavailable", "reason": backend.unavailable_reason()}
        reason = backend.can_load(loaded, requested, options)
        if reason:
            return {"status": "skip", "reason": reason}
        if options.memory_limit_mb:
            _set_memory_limit(options.memory_limit_mb)
        try:
            debug = req.get("debug")
            if debug:
                target, _, action = debug.rpartition(":")
                if not target or target == backend.name:
                    _debug_action(action)
            key = (loaded.source.key, backend.name, options.session_key(), requested)
            prepared = self.sessions.get(key)
            if prepared is None:
                try:
                    prepared = backend.prepare(loaded, requested, options)
                except Exception as exc:  # noqa: BLE001
                    return {"status": "error", "stage": "load", "reason": clean_message(exc)}
                if not options.profile:  # a profiled session is used once (profile ends with it)
                    self.sessions[key] = prepared
                    while len(self.sessions) > _MAX_SESSIONS:
                        self.sessions.popitem(last=False)
            else:
                self.sessions.move_to_end(key)
            try:
                out = backend.execute(prepared, req["inputs"], options)
            except MemoryError:
                return {"status": "error", "stage": "run", "reason": "out of memory (MemoryError)"}
            except Exception as exc:  # noqa: BLE001
                return {"status": "error", "stage": "run", "reason": clean_message(exc), "details": traceback.format_exc(limit=4)}
        finally:
            if options.memory_limit_mb:
                _set_memory_limit(None)
        return {
            "status": "ok",
            "values": out.values,
            "missing": out.missing,
            "profile": out.profile,
            "detail": out.detail,
            "run_seconds": out.run_seconds,
            "warnings": out.warnings,
            "roles": value_roles(loaded.scopes, requested),
        }


def _set_memory_limit(mb: int | None) -> None:
    try:
        import resource
    except ImportError:  # Windows: no RLIMIT_AS
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if mb is None:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    else:
        resource.setrlimit(resource.RLIMIT_AS, (mb * 1024 * 1024, hard))


def worker_main(conn: Connection) -> None:
    """Entry point of the child process: answer requests until the pipe closes."""
    from editor.runtime.transport import recv_message, send_message

    # The parent handles Ctrl+C; the worker must not die of the terminal's SIGINT first.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # numpy's overflow/invalid warnings from the reference evaluator would land in the
    # editor's terminal once per run; values with NaN/Inf show up in the stats instead.
    warnings.simplefilter("ignore", RuntimeWarning)
    worker = _Worker()
    while True:
        try:
            req = recv_message(conn)
        except (EOFError, OSError):
            break
        if req is None:
            break
        try:
            reply = worker.handle(req)
        except MemoryError:
            reply = {"status": "error", "stage": "run", "reason": "out of memory (MemoryError)"}
        except Exception as exc:  # noqa: BLE001 - never let one request kill the worker
            reply = {"status": "error", "stage": "worker", "reason": f"{type(exc).__name__}: {exc}".splitlines()[0], "details": traceback.format_exc()}
        reply["id"] = req.get("id")
        try:
            send_message(conn, reply)
        except (BrokenPipeError, OSError):
            break
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value
            send_message(conn, {"id": req.get("id"), "status": "error", "stage": "worker", "reason": f"cannot send result: {exc}"})
    sys.exit(0)
