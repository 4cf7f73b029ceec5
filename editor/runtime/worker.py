"""The run worker: a child process that loads models, keeps sessions warm, and runs them.

The parent (:class:`editor.runtime.runner.Runner`) sends one request per backend attempt;
the worker answers ``ok`` with the values, ``skip`` (the backend's ``can_load`` refused),
``error`` (session creation or the run raised), or ``need_model`` (the parent sent only the
key of a bytes model the worker no longer caches). Anything worse — a kernel that raises
SIGFPE/SIGSEGV, the OOM killer, a hang — kills or stalls only this process; the parent sees
that and reports it.

Sessions are cached by (model key, backend, session options, requested values) in a small
LRU, so repeated runs of the same model pay neither process start nor session creation.

NOTE: what the cache may hold is bounded by what is open, not by how long the editor has
been used. Each source names its ``document`` (an editor tab, a file): a new revision of a
document replaces the older ones before it is parsed (one entry per document, and no moment
with both copies); the ``forget`` request drops a closed tab's models and sessions; the
models are bounded by bytes (``cache_bytes`` of the request, by default a share of the
machine's memory) as well as by count; the bytes a model came as are dropped once it is
parsed and its first session exists. A model whose copy would not fit in the memory that is
free is refused with a message that says so, rather than swapping the machine to death.
Each entry's weight is an estimate, ``MODEL_WEIGHT`` times the model's serialized size (the
parsed proto plus a session's copy of the weights).

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

from editor.runtime.limits import effective_memory_limit_mb, looks_like_out_of_memory, out_of_memory
from editor.runtime.shared_values import can_share, spill_values

__all__ = ["worker_main"]

_HOOKS_ENV = "ONNX_STUDIO_RUNTIME_TEST_HOOKS"
_MAX_SESSIONS = 6
_MAX_MODELS = 6
#: memory one cached model holds, in multiples of its serialized size (proto + session)
MODEL_WEIGHT = 2.0
#: memory a bytes model needs while it is parsed: the bytes, the proto and a session's copy
LOAD_WEIGHT = 3.0


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
        #: model key -> (document, estimated bytes held)
        self.entries: dict[str, tuple[str | None, int]] = {}
        self.cache_bytes: int | None = None

    @property
    def cached_bytes(self) -> int:
        return sum(size for _doc, size in self.entries.values())

    def _drop(self, key: str) -> int:
        """Forget one model and its sessions; returns its estimated weight."""
        self.models.pop(key, None)
        _doc, size = self.entries.pop(key, (None, 0))
        for k in [k for k in self.sessions if k[0] == key]:
            del self.sessions[k]
        return size

    def forget(self, documents: list[str]) -> int:
        """Drop every model (and its sessions) of these documents; returns how many."""
        keys = [k for k, (doc, _size) in self.entries.items() if doc is not None and doc in documents]
        _release_memory(sum(self._drop(key) for key in keys))
        return len(keys)

    def _evict(self, keep: str = "", incoming: int = 0) -> None:
        """Drop the least recently used models (``keep`` stays) until the count and the
        byte bound hold, with room for an ``incoming`` model of that weight if nonzero."""
        from editor.runtime.memory import default_cache_bytes

        limit = self.cache_bytes if self.cache_bytes is not None else default_cache_bytes()
        extra = 1 if incoming else 0
        freed = 0
        for key in list(self.models):
            if len(self.models) + extra <= _MAX_MODELS and self.cached_bytes + incoming <= limit:
                break
            if key != keep:
                freed += self._drop(key)
        _release_memory(freed)

    def _model(self, source: Any) -> Any:
        from editor.errors import LoadError
        from editor.runtime.backends import LoadedModel

        loaded = self.models.get(source.key)
        if loaded is not None:
            self.models.move_to_end(source.key)
            return loaded
        if source.data is None and source.path is None:
            return None
        if source.document is not None:
            self.forget([source.document])  # older revisions go before the new one is parsed
        size = source.size
        self._evict(incoming=max(1, int(size * MODEL_WEIGHT)))  # make room before parsing
        need = int(size * LOAD_WEIGHT) if source.data is not None else int(size * MODEL_WEIGHT)
        from editor.runtime.memory import available_memory

        free = available_memory()
        if free is not None and need > free:
            raise LoadError(
                f"not enough free memory to run this model from the editor: it is {_mb(size)} and a run needs "
                f"about {_mb(need)}, but only {_mb(free)} is free. Close other programs or tabs, or save the "
                "model and run the file with onnx-studio run")
        loaded = LoadedModel.from_source(source)
        self.models[source.key] = loaded
        self.entries[source.key] = (source.document, int(size * MODEL_WEIGHT))
        return loaded

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "ping":
            return {"status": "ok", "pid": os.getpid()}
        if op == "forget":
            return {"status": "ok", "forgotten": self.forget(list(req.get("documents", ())))}
        if op == "stats":
            from editor.runtime.memory import rss_bytes

            return {"status": "ok", "models": len(self.models), "sessions": len(self.sessions),
                    "cached_bytes": self.cached_bytes, "rss": rss_bytes(),
                    "source_bytes": sum(len(m.source.data or b"") for m in self.models.values())}
        if op == "providers":
            ort = self.backends["ort"]
            return {"status": "ok", "providers": ort.available_providers() if ort.available() else []}
        if op != "run":
            return {"status": "error", "reason": f"unknown request {op!r}"}
        return self._run(req)

    def _run(self, req: dict[str, Any]) -> dict[str, Any]:
        from editor.errors import StudioError
        from editor.runtime.backends import value_roles

        backend = self.backends[req["backend"]]
        options = req["options"]
        if "cache_bytes" in req:
            self.cache_bytes = req["cache_bytes"]
        try:
            loaded = self._model(req["source"])
            # the request's copy of the bytes is not needed past this point
            req["source"] = loaded.source if loaded is not None else req["source"]
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
        limit = effective_memory_limit_mb(options.memory_limit_mb)
        if options.memory_limit_mb is None and _gpu_session(backend, options):
            limit = None  # GPU runtimes reserve address space far beyond RAM: only an asked-for cap
        if limit:
            _set_memory_limit(limit)
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
                    return {"status": "error", "stage": "load", "reason": _reason(exc, limit)}
                if not options.profile:  # a profiled session is used once (profile ends with it)
                    self.sessions[key] = prepared
                    while len(self.sessions) > _MAX_SESSIONS:
                        self.sessions.popitem(last=False)
                # the proto and the session have it all now: drop the bytes it came as
                loaded.drop_source_bytes()
            else:
                self.sessions.move_to_end(key)
            try:
                out = backend.execute(prepared, req["inputs"], options)
            except Exception as exc:  # noqa: BLE001 - MemoryError included
                return {"status": "error", "stage": "run", "reason": _reason(exc, limit), "details": traceback.format_exc(limit=4)}
        except MemoryError as exc:  # outside the backend's own calls (a test hook, the cache)
            return {"status": "error", "stage": "run", "reason": _reason(exc, limit)}
        finally:
            if limit:
                _set_memory_limit(None)
        # big tensors leave through nameless shared files, one write each (shared_values)
        handles = spill_values(out.values, req.get("spill_dir")) if can_share() else []
        if debug and debug.endswith("-after-run"):
            target, _, action = debug.removesuffix("-after-run").rpartition(":")
            if not target or target == backend.name:
                _debug_action(action)
        return {
            "_handles": handles,
            "status": "ok",
            "values": out.values,
            "missing": out.missing,
            "profile": out.profile,
            "detail": out.detail,
            "run_seconds": out.run_seconds,
            "warnings": out.warnings,
            "roles": value_roles(loaded.scopes, requested),
        }


def _mb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


#: below this much freed, giving memory back is not worth a collection (~10 ms each)
RELEASE_AT = 32 * 1024 * 1024


def _release_memory(freed: int) -> None:
    """Give a dropped model's memory back to the system now (cycles collected, heap
    trimmed), when it was big enough to matter."""
    if freed < RELEASE_AT:
        return
    import gc

    from editor.runtime.memory import trim

    gc.collect()
    trim()


def _reason(exc: BaseException, limit_mb: int | None) -> str:
    """One line for a backend's failure; an allocation failure says which limit it hit."""
    from editor.runtime.backends import clean_message

    message = clean_message(exc)
    if isinstance(exc, MemoryError) or looks_like_out_of_memory(message):
        return out_of_memory(limit_mb)
    return message


def _gpu_session(backend: Any, options: Any) -> bool:
    """Whether onnxruntime will run on a device (CUDA, ROCm, DirectML ...): their drivers map
    huge address ranges, so an address-space cap would refuse every session."""
    if backend.name != "ort":
        return False
    providers = options.providers or backend.default_providers()
    return any(p != "CPUExecutionProvider" for p in providers)


def _die_with_parent(death_signal: bool) -> None:
    """End this worker when the editor process ends, however it ends (even SIGKILL).

    Linux: ``PR_SET_PDEATHSIG`` (the kernel sends SIGKILL when the parent goes) when the
    parent asked for it, i.e. when it started us from its main thread: the signal follows
    the *thread* that forked, and a GUI starts workers from short-lived run threads. Every
    platform (macOS, Windows too): a thread waits on the parent's sentinel, which the OS
    closes when the parent dies, and exits at once.
    """
    import multiprocessing as mp
    import threading
    from multiprocessing.connection import wait

    if death_signal and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    parent = mp.parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        wait([sentinel])
        os._exit(1)

    if wait([sentinel], timeout=0):  # the parent died before we got here
        os._exit(1)
    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


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


def worker_main(conn: Connection, death_signal: bool = False) -> None:
    """Entry point of the child process: answer requests until the pipe closes."""
    from editor.runtime.shared_values import close_handles
    from editor.runtime.transport import recv_message, send_message

    _die_with_parent(death_signal)

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
            reply = {"status": "error", "stage": "run", "reason": out_of_memory(None)}
        except Exception as exc:  # noqa: BLE001 - never let one request kill the worker
            reply = {"status": "error", "stage": "worker", "reason": f"{type(exc).__name__}: {exc}".splitlines()[0], "details": traceback.format_exc()}
        reply["id"] = req.get("id")
        handles = reply.pop("_handles", [])
        try:
            send_message(conn, reply, handles)
        except (BrokenPipeError, OSError):
            break
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable value
            send_message(conn, {"id": req.get("id"), "status": "error", "stage": "worker", "reason": f"cannot send result: {exc}"})
        finally:
            close_handles(handles)  # the parent has its own descriptors now (or none are needed)
        del reply, req  # the values' memory goes before the next request comes
    sys.exit(0)
