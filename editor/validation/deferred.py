"""The live check that reads the whole model, run off the editing thread.

Comparing the declared shapes of the graph's outputs and value_info with what the model
computes (:func:`~editor.validation.declared.declared_dim_findings`) infers the whole model:
onnx's C++ inference and our shape engine, 60-700 ms on a few hundred nodes. Inside an edit
that froze the window for as long after every keystroke of a rename.
:class:`DeferredDeclared` runs it on a worker thread instead, behind the edits:

* the validator (after :meth:`Validator.defer_declared`) says ``declared_due`` after each edit
  that may change the comparison (not after a rename);
* :meth:`DeferredDeclared.request` takes a structure snapshot (weights as dims only: the
  inference never reads their data) and compares on the worker; requests that arrive while one
  runs are coalesced into one more run after it;
* the findings are handed back through ``deliver`` (the GUI queues them onto its own thread)
  and merged only if no edit since may have changed them; otherwise the next run brings them.

NOTE: onnx's inference holds the GIL while it runs (tens of milliseconds on a snapshot of a
1,000-node graph, where the whole model with its weights took up to seconds): that is the
longest the editing thread can wait on this worker. The size gate stays
(:meth:`Validator.declared_live`), from sizes the index knows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from editor.validation.declared import declared_dim_findings

if TYPE_CHECKING:
    from editor.validation.validator import Validator

log = logging.getLogger(__name__)


class DeferredDeclared:
    """Runs a validator's declared-shape comparison on a worker thread (see the module)."""

    def __init__(self, validator: Validator, *, deliver: Callable[[Callable[[], None]], None] | None = None) -> None:
        self.validator = validator
        self._deliver = deliver or (lambda fn: fn())
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="declared-shapes")
        self._running = False
        self._again = False
        self._closed = False
        self._idle = threading.Event()
        self._idle.set()
        #: comparisons run and merged (tests, benchmarks)
        self.runs = 0
        self.merged = 0

    @property
    def busy(self) -> bool:
        return self._running

    def request(self) -> None:
        """Compare the document as it is now, off this thread (coalesced; call it on the
        thread that edits the document)."""
        if self._closed:
            return
        if self._running:
            self._again = True
            return
        v = self.validator
        version = v.declared_version
        self._again = False
        if not v.declared_live():
            v.merge_declared([], version)
            return
        from editor.shapes.engine import structure_snapshot

        snapshot = structure_snapshot(v.doc.model)
        self._running = True
        self._idle.clear()
        self._executor.submit(self._work, snapshot, version)

    def _work(self, snapshot, version: int) -> None:
        try:
            findings = declared_dim_findings(snapshot, negatives=False)
        except Exception:  # noqa: BLE001 - a failing comparison costs its warnings, never the editor
            log.exception("comparing declared shapes failed")
            findings = []
        self._deliver(lambda: self._merge(findings, version))

    def _merge(self, findings: list, version: int) -> None:
        self._running = False
        self.runs += 1
        if self._closed:
            self._idle.set()
            return
        if self.validator.merge_declared(findings, version):
            self.merged += 1
        if self._again or version != self.validator.declared_version:
            self.request()
        if not self._running:
            self._idle.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no comparison is running (the merge needs ``deliver`` to have run:
        a GUI caller must keep its event loop going, e.g. ``qtbot.waitUntil``)."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
