"""Loading models off the GUI thread, with cancel, and the error dialog loads share.

``ModelLoader.load(path)`` parses and indexes the model on a ``QThreadPool`` worker
(``Document.open``); the window stays responsive and shows the busy state. Results come
back through queued signals. Cancelling drops the request: the worker cannot be stopped
inside the protobuf parser, so it finishes in the background and its document is thrown
away — no tab is ever created for a cancelled or failed load.

Errors are :class:`~editor.errors.StudioError` (the same one-line message the CLI prints);
anything else is wrapped into a LoadError with the traceback as details.
"""

from __future__ import annotations

import itertools
import traceback
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from editor.errors import ExternalDataError, LoadError, StudioError
from widgets.common.channel import Channel


@dataclass
class LoadRequest:
    id: int
    path: Path
    data_dir: Path | None = None
    cancelled: bool = False
    #: the live validator built and run on the worker (when editor.validation is present)
    validator: object | None = None
    #: the main graph's name-scope groups (``editor.viewmodel.group_tree``), made on the worker
    groups: object | None = None


class _Relay(QObject):
    """Lives in the GUI thread; workers emit through it (queued connections)."""

    done = Signal(int, object)
    error = Signal(int, object)


class _LoadTask(QRunnable):
    def __init__(self, request: LoadRequest, relay: Channel) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._request = request
        self._relay = relay

    def run(self) -> None:
        from editor.document import Document

        req = self._request
        try:
            doc = Document.open(req.path, data_dir=req.data_dir)
        except StudioError as exc:
            self._relay.emit("error", req.id, exc)
            return
        except BaseException as exc:  # noqa: BLE001 - a worker must never take the app down
            err = LoadError(f"cannot open '{req.path}': {type(exc).__name__}: {exc}",
                            details=traceback.format_exc())
            self._relay.emit("error", req.id, err)
            return
        req.validator = _first_validation(doc)
        req.groups = _main_groups(doc)
        if not self._relay.emit("done", req.id, doc):  # the loader is gone: nobody closes it
            _close_store(doc)


#: models up to this many nodes (all graphs) are checked whole on the loader's worker, so
#: they open with their problems listed; bigger ones open unchecked and their tab runs the
#: first pass in steps once the model is on screen (``LiveChecks.start_first_pass``)
FIRST_PASS_ON_LOAD_MAX_NODES = 2000


def _first_validation(doc):
    """A live Validator over ``doc``, with its first full pass done (off the GUI thread)
    when the model is small (:data:`FIRST_PASS_ON_LOAD_MAX_NODES`).

    NOTE: the pass took 1.6 s CPU on the 11.8k-node export, and it held the GIL before the
    model could be drawn: most of the gap between onnx.load (0.6 s) and the first picture.

    None when the validation fails: problems are a view, not a reason to refuse a model
    the loader could open."""
    from editor.validation import Validator

    try:
        validator = Validator(doc)
        if len(doc.index.nodes) <= FIRST_PASS_ON_LOAD_MAX_NODES:
            validator.validate_all()
        return validator
    except Exception:  # noqa: BLE001 - see docstring
        return None


def _main_groups(doc):
    """The main graph's group tree, which the tab's first picture needs (None when it cannot
    be made: the tab then tries, and a failure shows as a failed layout as before).

    NOTE: 0.25-0.35 s on the 11.8k-node export (every node's scoped name): made on the GUI
    thread, opening a big model in a running window froze it that long."""
    from editor.viewmodel import group_tree

    try:
        return group_tree(doc.model.graph)
    except Exception:  # noqa: BLE001 - see docstring
        return None


class ModelLoader(QObject):
    """Background loads; see module docstring.

    Signals: ``started(request)``, ``loaded(request, document)``, ``failed(request, error)``
    (error is a StudioError; an :class:`ExternalDataError` means the weights' folder is
    wanted), ``cancelled(request)``, ``busyChanged(bool)``.
    """

    started = Signal(object)
    loaded = Signal(object, object)
    failed = Signal(object, object)
    cancelled = Signal(object)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.error.connect(self._on_error)
        # NOTE: a load cannot be stopped inside the parser and may outlive the window (a
        # cancelled load still parsing when the window is freed: once a segfault, the task
        # emitting through the deleted relay). Its task posts through a channel closed before
        # Qt deletes the relay (widgets/common/channel.py); a closure, not a method of this
        # object: it still runs while the object is being destroyed, and is held strongly
        channel = self._channel = Channel(self._relay)
        self.destroyed.connect(lambda *_args: channel.close())
        self._ids = itertools.count(1)
        self._pending: dict[int, LoadRequest] = {}

    def is_busy(self) -> bool:
        return bool(self._pending)

    def pending(self) -> list[LoadRequest]:
        return list(self._pending.values())

    def load(self, path: str | Path, *, data_dir: str | Path | None = None) -> LoadRequest:
        request = LoadRequest(next(self._ids), Path(path), Path(data_dir) if data_dir else None)
        was_busy = self.is_busy()
        self._pending[request.id] = request
        self.started.emit(request)
        if not was_busy:
            self.busyChanged.emit(True)
        self._pool.start(_LoadTask(request, self._channel))
        return request

    def cancel(self, request: LoadRequest | None = None) -> None:
        """Cancel one request (or all of them); their results will be discarded."""
        targets = [request] if request is not None else list(self._pending.values())
        for req in targets:
            if self._pending.pop(req.id, None) is not None:
                req.cancelled = True
                self.cancelled.emit(req)
        if targets and not self._pending:
            self.busyChanged.emit(False)

    def _finish(self, rid: int) -> LoadRequest | None:
        req = self._pending.pop(rid, None)
        if req is not None and not self._pending:
            self.busyChanged.emit(False)
        return req

    def _on_done(self, rid: int, doc) -> None:
        req = self._finish(rid)
        if req is None:  # cancelled meanwhile: drop the document and its open files
            _close_store(doc)
            return
        self.loaded.emit(req, doc)

    def _on_error(self, rid: int, exc) -> None:
        req = self._finish(rid)
        if req is not None:
            self.failed.emit(req, exc)


def _close_store(doc) -> None:  # noqa: ANN001
    store = getattr(doc, "store", None)
    if store is not None:
        store.close()


def show_error(parent: QWidget | None, title: str, error: StudioError | str, *, details: str | None = None) -> None:
    """The app's error dialog: the one-line message, details (if any) behind a button."""
    message = error.message if isinstance(error, StudioError) else str(error)
    if details is None and isinstance(error, StudioError):
        details = error.details
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle(title)
    box.setText(message)
    if details:
        box.setDetailedText(details)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.exec()


__all__ = ["ExternalDataError", "LoadRequest", "ModelLoader", "show_error"]
