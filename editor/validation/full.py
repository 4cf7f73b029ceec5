"""The full check: ``onnx.checker`` (full) and strict shape inference, on demand or in the
background, with its findings mapped to problem records and node ids.

NOTE: measured on a 10,000-node model (a GUI-like thread sleeping 1 ms in a loop beside a
worker thread): ``onnx.checker.check_model`` on serialized bytes releases the GIL (longest
stall 3 ms of a 290 ms check), but on a ModelProto it does not (340 ms stall), and
``onnx.shape_inference.infer_shapes`` holds it for its whole run (320 ms stall). A thread
would make the GUI stutter, so :class:`BackgroundChecker` runs the check in a child process
by default (a persistent one-worker ``ProcessPoolExecutor``, "spawn" so it is safe beside
Qt) fed with the serialized model; a thread pool is available for tests and tools, and the
checker is always given bytes so at least that part runs beside the GUI.
The onnx checker stops at its first error, so a full check yields a handful of problems;
the live validator is the one that lists them all.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from psygnal import Signal

from editor.validation.declared import declared_dim_findings
from editor.validation.problems import ERROR, WARNING, Problem

if TYPE_CHECKING:
    from editor.document import Document
    from editor.validation.validator import Validator

#: (code, message, candidate nodes as ((name, op_type or None), ...) innermost first, value,
#: severity): plain data, so it crosses process borders
RawProblem = tuple[str, str, tuple[tuple[str, str | None], ...], str | None, str]

_CODE_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), code)
    for p, code in [
        (r"No opset import for domain", "unknown-domain"),
        (r"No Op registered for", "unknown-op"),
        (r"is deprecated in domain_version|has been deprecated since", "deprecated-op"),
        (r"has input size|more inputs", "input-count"),
        (r"has output size|more outputs", "output-count"),
        (r"input \d+ is marked single", "missing-input"),
        (r"output \d+ is marked single", "missing-output"),
        (r"Unrecognized attribute", "attr-unknown"),
        (r"Mismatched attribute type", "attr-type"),
        (r"Required attribute '.*' is missing", "attr-missing"),
        (r"appeared multiple times", "attr-duplicate"),
        (r"is expected to have field", "attr-value"),
        (r"single static assignment|initializer name is not unique|should not have duplicate", "ssa"),
        (r"topologically sorted", "graph-order"),
        (r"Graph output '.*' is not an output of any node", "undefined-output"),
        (r"Field 'name' of 'graph' is required", "graph-name"),
        (r"Field '\w+' of '\w+' is required but missing", "missing-type"),
        (r"in initializer but not in graph input", "initializer-input"),
        (r"ir_version", "ir-version"),
        (r"must specify opset_import", "opset-import"),
        (r"duplicate keys in metadata_props", "metadata"),
        (r"Inferred elem type differs|Inferred shape and existing shape differ|has unsupported type|"
         r"has inconsistent type|type case mismatch", "type-mismatch"),
        (r"ShapeInferenceError|TypeInferenceError|InferenceError", "shape-inference"),
    ]
]
_NODE_SPEC = re.compile(r"[Nn]ame: ?(\S*) OpType: (\S+)")
_INFER_NODE = re.compile(r"\(op_type:([^,)]*)(?:, node name: ([^)]*))?\)")
_NODE_PAREN = re.compile(r"Node ?\(([^)]*)\)")
_QUOTED = re.compile(r"'([^']*)'")


def classify(message: str) -> str:
    """The problem code of an onnx.checker / shape inference message ("checker" if unknown)."""
    for pattern, code in _CODE_PATTERNS:
        if pattern.search(message):
            return code
    return "checker"


def _raw_from_message(message: str, kind: str, severity: str = ERROR) -> list[RawProblem]:
    """Split one checker or inference error into raw problems (one per inference line)."""
    message = message.strip()
    out: list[RawProblem] = []
    if kind == "inference" and "Inference error(s):" in message:
        lines = [ln for ln in message.split("\n") if ln.strip()]
        lines[0] = lines[0].split("Inference error(s):", 1)[1]
    else:
        lines = [message]
    for line in lines:
        line = line.strip()
        if not line:
            continue
        candidates: list[tuple[str, str | None]] = []
        for op_type, node_name in reversed(_INFER_NODE.findall(line)):  # innermost first
            candidates.append((node_name, op_type))
        for node_name, op_type in _NODE_SPEC.findall(line):  # "of node: name: X OpType: Y" first
            candidates.append((node_name, op_type))
        for node_name in _NODE_PAREN.findall(line):
            candidates.append((node_name, None))
        quoted = _QUOTED.findall(line)
        code = classify(line)
        value = None
        if code in ("ssa", "graph-order", "undefined-output", "attr-missing"):
            value = quoted[0] if quoted else None
        text = " ".join(line.replace("==> Context:", "|").split())
        out.append((code, text, tuple(candidates), value, severity))
    return out


def raw_full_check(model: onnx.ModelProto | bytes | str | os.PathLike) -> list[RawProblem]:
    """Run the checker (full), then strict shape inference with data propagation.

    Accepts a ModelProto, its serialized bytes, or a path (a path lets the checker find
    external data and handle models over 2 GB).

    NOTE: errors are only what onnx's own full check rejects (the checker runs strict
    shape inference *without* data propagation). Data propagation goes further and is
    sometimes wrong: onnx 1.23 propagates the values of a [160, 1] float tensor as if it
    were a 1-D shape and then fails "Invalid rank for Add broadcasting: (160) vs (475)" on
    a sinc resampler that onnx.checker accepts and onnxruntime runs. What only data
    propagation finds is therefore a *warning*: worth a look, never a verdict.
    """
    from onnx.checker import ValidationError
    from onnx.shape_inference import InferenceError

    from editor.ort_schemas import ensure_registered

    ensure_registered()  # onnxruntime's contrib ops are known ops, here as in onnxruntime
    out: list[RawProblem] = []
    checker_failed_in_inference = False
    proto = model if isinstance(model, onnx.ModelProto) else None
    if proto is not None:
        try:
            model = model.SerializeToString()  # bytes: the checker then runs without the GIL
        except ValueError:  # over 2 GB: the checker must read it from a file instead
            pass
    try:
        onnx.checker.check_model(str(model) if isinstance(model, (str, os.PathLike)) else model, full_check=True)
    except InferenceError as exc:
        checker_failed_in_inference = True
        out += _raw_from_message(str(exc), "inference")
    except ValidationError as exc:
        out += _raw_from_message(str(exc), "checker")
    except Exception as exc:  # noqa: BLE001 - a parse failure or a checker crash is a problem too
        out.append(("checker", f"onnx.checker failed: {exc}".splitlines()[0], (), None, ERROR))
    if checker_failed_in_inference:
        return [_runtime_accepts(r) for r in out]
    if proto is None:
        if isinstance(model, (str, os.PathLike)):
            proto = onnx.load(str(model), load_external_data=False)
        else:
            proto = onnx.ModelProto.FromString(model)
    checker_passed = not out
    if not checker_passed:
        # the checker stopped before its own inference: run that inference (as onnx's full
        # check would have), its findings are errors onnx stands behind
        out += _inference_problems(proto, data_prop=False, severity=ERROR, known=out)
    out += _inference_problems(proto, data_prop=True, severity=WARNING, known=out)
    out += declared_dim_problems(proto)
    return [_runtime_accepts(r) for r in out]


_SHAPE_ONLY = re.compile(r"Inferred shape and existing shape differ")


def _runtime_accepts(raw: RawProblem) -> RawProblem:
    """A declared shape that contradicts the computed one (same element type): onnx's
    strict inference refuses the model, onnxruntime loads it (it keeps the computed shape,
    :func:`~editor.validation.typecheck.runtime_accepts`), so it is a warning that says so."""
    code, message, nodes, value, severity = raw
    if severity != ERROR or not _SHAPE_ONLY.search(message):
        return raw
    from editor.validation.typecheck import ORT_MERGES

    return ("declared-dim", f"{message} ({ORT_MERGES})", nodes, value, WARNING)


def declared_dim_problems(proto: onnx.ModelProto) -> list[RawProblem]:
    """:func:`~editor.validation.declared.declared_dim_findings` as raw problems, each
    naming the node that produces the value."""
    findings = declared_dim_findings(proto)
    if not findings:
        return []
    producers = {o: (n.name, n.op_type) for n in proto.graph.node for o in n.output}
    return [(code, message, (producers[value],) if value in producers else (), value, severity)
            for code, message, value, severity in findings]


def _inference_problems(
    proto: onnx.ModelProto, *, data_prop: bool, severity: str, known: list[RawProblem]
) -> list[RawProblem]:
    """Strict shape inference's findings that ``known`` does not already hold."""
    from onnx.checker import ValidationError
    from onnx.shape_inference import InferenceError

    seen = {r[:4] for r in known}
    try:
        onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True, data_prop=data_prop)
    except (InferenceError, ValidationError) as exc:
        raws = _raw_from_message(str(exc), "inference", severity)
    except Exception as exc:  # noqa: BLE001 - an inference crash is worth a line, not a verdict
        return [("shape-inference", f"shape inference failed: {exc}".splitlines()[0], (), None, WARNING)]
    else:
        return []
    prefix = "with data propagation: " if data_prop else ""
    return [(r[0], prefix + r[1], *r[2:]) for r in raws if r[:4] not in seen]


def to_problems(raw: list[RawProblem], doc: Document | None = None) -> list[Problem]:
    """Raw findings as problem records, with node ids where ``doc`` names the node."""
    by_name: dict[tuple[str, str], int] = {}
    defined: set[str] = set()
    if doc is not None:
        for scope, nid, node in doc.index.iter_nodes():
            by_name.setdefault((node.name, node.op_type), nid)
            defined.update(o for o in node.output if o)
        for scope in doc.index.scopes.values():
            defined.update(scope.input_names())
            defined.update(scope.initializer_names())
    out: list[Problem] = []
    for code, message, candidates, value, severity in raw:
        nid = sid = None
        graph = ""
        if doc is not None:
            for node_name, op_type in candidates:
                if op_type:
                    nid = by_name.get((node_name, op_type))
                elif node_name:
                    nid = next((n for (nm, _), n in by_name.items() if nm == node_name), None)
                if nid is not None:
                    break
            if nid is not None:
                sid = doc.index.node_scope[nid]
                graph = doc.index.path(sid)
        if nid is None and value is not None and doc is not None and code == "declared-dim":
            sid = doc.index.main  # a main-graph declaration nothing produces (a graph input)
            graph = doc.index.path(sid)
        if code == "graph-order" and doc is not None and value is not None and value not in defined:
            code = "undefined-value"  # the checker says "not sorted" for both
        out.append(Problem(severity, code, message, nid, value, sid, graph, source="full"))
    return out


def full_check(model: onnx.ModelProto | bytes | str | os.PathLike, doc: Document | None = None) -> list[Problem]:
    """``onnx.checker.check_model(full_check=True)`` + strict shape inference, as problems
    (on the calling thread; see :class:`BackgroundChecker` for the GUI)."""
    return to_problems(raw_full_check(model), doc)


def _worker(data: bytes, base_dir: str | None) -> list[RawProblem]:
    """Runs in the child process. The checker resolves external data relative to the
    working directory when it checks bytes, so the child moves to the model's folder
    (its own working directory: the editor's is untouched)."""
    if base_dir is not None:
        os.chdir(base_dir)
    return raw_full_check(data)


def _thread_worker(data: bytes, base_dir: str | None) -> list[RawProblem]:
    # NOTE: a thread cannot change the working directory of the process under the GUI, so
    # in thread mode external data files are looked up from the current directory.
    return raw_full_check(data)


class BackgroundChecker:
    """Runs :func:`full_check` on snapshots of a validator's document, off the calling
    thread, and merges the results into the validator (source "full").

    ``deliver(fn)`` decides on which thread a finished check is merged: the GUI passes a
    function that queues ``fn`` on its own thread; the default runs it on the worker's
    callback thread, under the validator's lock. Results of a snapshot the document has
    moved past are dropped.
    """

    #: (problems) after a check's results were merged
    finished = Signal(object)

    def __init__(
        self,
        validator: Validator,
        *,
        processes: bool = True,
        executor: Executor | None = None,
        deliver: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        # (here, not at the top: a full check runs on demand, and multiprocessing with the
        # process pool is ~15 ms of the window's start-up before its first picture)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.validator = validator
        self._own_executor = executor is None
        if executor is None:
            if processes:
                executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            else:
                executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="onnx-full-check")
        self._executor = executor
        self._in_process = isinstance(executor, ProcessPoolExecutor)
        self._deliver = deliver or (lambda fn: fn())
        self._future: Future | None = None
        self._handled = threading.Event()
        self._handled.set()
        self._token = 0
        self._lock = threading.Lock()
        self.last_dropped = False

    def submit(self) -> Future:
        """Snapshot the document now and check it in the background (replaces a pending check)."""
        doc = self.validator.doc
        version = self.validator.version
        data = doc.serialize()
        base_dir = str(doc.path.resolve().parent) if doc.path is not None else None
        with self._lock:
            self._token += 1
            token = self._token
            if self._future is not None:
                self._future.cancel()
            fut = self._executor.submit(_worker if self._in_process else _thread_worker, data, base_dir)
            self._future = fut
            handled = self._handled = threading.Event()
        fut.add_done_callback(lambda f: self._done(f, token, version, handled))
        return fut

    def _done(self, fut: Future, token: int, version: int, handled: threading.Event) -> None:
        if fut.cancelled():
            handled.set()
            return
        try:
            raw = fut.result()
        except Exception as exc:  # noqa: BLE001 - a dead worker is reported, not raised
            raw = [("checker", f"the background check failed: {exc}".splitlines()[0], (), None, ERROR)]

        def merge() -> None:
            try:
                _merge()
            finally:
                handled.set()

        def _merge() -> None:
            with self._lock:
                current = token == self._token
            v = self.validator
            if not current or version != v.version:
                self.last_dropped = True
                return
            with v._lock:  # noqa: SLF001 - the mapping reads the document the validator guards
                if version != v.version:
                    self.last_dropped = True
                    return
                problems = to_problems(raw, v.doc)
                v.merge_full(problems, version)
            self.last_dropped = False
            self.finished.emit(problems)

        self._deliver(merge)

    def cancel(self) -> None:
        """Forget the pending check: its results, when they come, are dropped."""
        with self._lock:
            self._token += 1
            if self._future is not None:
                self._future.cancel()
                self._future = None

    def wait(self, timeout: float | None = None) -> None:
        """Block until the latest submitted check has finished (tests, scripts)."""
        fut, handled = self._future, self._handled
        if fut is not None:
            try:
                fut.result(timeout)
            except Exception:  # noqa: BLE001 - reported through merge
                pass
            if not fut.cancelled():
                handled.wait(timeout)

    def shutdown(self) -> None:
        self.cancel()
        if self._own_executor:
            self._executor.shutdown(wait=False, cancel_futures=True)


def check_path(path: str | Path) -> list[RawProblem]:
    """Full check of a model file by path (external data found next to it)."""
    return raw_full_check(Path(path))
