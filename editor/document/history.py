"""Commands, transactions and the undo stack (Qt-free).

A :class:`Command` describes an edit. ``Document.execute`` runs its :meth:`Command.run`
inside a :class:`Transaction`: every primitive op applies at once and logs its inverse; if
anything raises before the command finishes, the transaction rolls back, so a refused edit
leaves the model exactly as it was. The finished command keeps the forward ops (for redo)
and the inverses (for undo).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from psygnal import Signal

from editor.document.changes import ChangeSet
from editor.document.ops import Op

if TYPE_CHECKING:
    from editor.document.document import Document


class Transaction:
    """Applies ops to a document and remembers how to take them back."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.forward: list[Op] = []
        self.inverse: list[Op] = []
        self.changes = ChangeSet()

    def apply(self, op: Op) -> Op:
        inv = op.apply(self.doc.index, self.changes)
        self.forward.append(op)
        self.inverse.append(inv)
        return inv

    def rollback(self) -> None:
        scratch = ChangeSet()
        for inv in reversed(self.inverse):
            inv.apply(self.doc.index, scratch)
        self.forward.clear()
        self.inverse.clear()


class Command:
    """An edit with a label. Subclasses implement :meth:`run`.

    ``run`` first checks every precondition (raising :class:`~editor.errors.CommandError`
    with the reason), then applies ops through ``tx``. It may read the document between
    ops; it must not touch the protobuf except through ``tx.apply``.
    """

    label: str = "Edit"
    #: commands with equal, non-None keys pushed one after another merge into one undo step
    #: (typing a name character by character is one "Rename node" in the history).
    merge_key: tuple | None = None

    def __init__(self) -> None:
        self._forward: list[Op] = []
        self._inverse: list[Op] = []
        self.timestamp = 0.0

    def __init_subclass__(cls, **kwargs: object) -> None:
        # Record the arguments each command was made with, so any command can be written
        # back out as a line of a script (history export) without per-class code.
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        def recording_init(self: Command, *args: object, _init=init, **kw: object) -> None:
            if not hasattr(self, "_ctor"):
                self._ctor = (type(self).__name__, args, kw)
            _init(self, *args, **kw)

        recording_init.__doc__ = init.__doc__
        recording_init.__wrapped__ = init  # type: ignore[attr-defined]
        cls.__init__ = recording_init  # type: ignore[method-assign]

    def run(self, doc: Document, tx: Transaction) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- used by the stack -------------------------------------------------------------
    # NOTE: undo keeps the inverses of the ops it applies as the new forward list, and redo
    # keeps the inverses of its ops as the new undo list. Replaying the *original* forward
    # ops instead would re-allocate ids: an added node (or the bodies of a graph attribute)
    # came back under a fresh id on redo, and every later command of the stack that targets
    # ("node", id) then failed to redo. The inverse of an inverse carries the id tree that
    # removal recorded, so ids survive any number of undo/redo cycles.
    def _replay(self, doc: Document, ops: list[Op]) -> tuple[ChangeSet, list[Op]]:
        changes = ChangeSet()
        inverses = [op.apply(doc.index, changes) for op in ops]
        return changes.finalize(), inverses

    def redo(self, doc: Document) -> ChangeSet:
        changes, inverses = self._replay(doc, self._forward)
        self._inverse = inverses
        return changes

    def undo(self, doc: Document) -> ChangeSet:
        changes, inverses = self._replay(doc, list(reversed(self._inverse)))
        self._forward = list(reversed(inverses))
        return changes

    def absorb(self, later: Command) -> None:
        """Fold ``later`` (already applied) into this command: one undo step for both.

        The step keeps its first label: typing "conv1" -> "conv12" -> "conv123" is one
        "Rename node 'conv1'", named for the state that undo returns to.
        """
        self._forward += later._forward
        self._inverse += later._inverse
        # merged commands set one field: the later command's arguments are the end state
        if hasattr(later, "_ctor"):
            self._ctor = later._ctor
        self.timestamp = later.timestamp


class FunctionCommand(Command):
    """A command from a plain function ``fn(doc, tx)``: for composites and scripts."""

    def __init__(self, label: str, fn: Callable[[Document, Transaction], None]) -> None:
        super().__init__()
        self.label = label
        self._fn = fn

    def run(self, doc: Document, tx: Transaction) -> None:
        self._fn(doc, tx)


class CompositeCommand(Command):
    """Several commands as one undo step ("Delete 3 nodes"). Each part sees the state the
    previous parts left; if any part refuses, all of them are rolled back."""

    def __init__(self, label: str, parts: list[Command]) -> None:
        super().__init__()
        self.label = label
        self.parts = parts

    def run(self, doc: Document, tx: Transaction) -> None:
        for part in self.parts:
            part.run(doc, tx)


class UndoStack:
    """Executed commands with a cursor and a clean mark.

    It tells listeners about every change as it happens, so a view of the history (the
    History panel's item model) updates in O(1) per push, undo or redo instead of
    re-reading the whole list (a rebuild per edit made each edit cost ~10 µs per command
    already on the stack: 60 ms per keystroke after a few thousand edits).

    Signals (positions are indexes into :attr:`commands`):

    * ``removing(first, last)`` before commands ``first..last`` (inclusive) are dropped
      (a push after undo discards the redo branch), ``removed()`` after;
    * ``inserting(position)`` before a command is appended, ``inserted()`` after;
    * ``merged(position)``: the command there absorbed a later one (same row, new end state);
    * ``moved(old, new)``: :attr:`index` changed (push, undo, redo);
    * ``clean_moved(old, new)``: :attr:`clean_index` changed (save, or the saved state
      became unreachable).
    """

    removing = Signal(int, int)
    removed = Signal()
    inserting = Signal(int)
    inserted = Signal()
    merged = Signal(int)
    moved = Signal(int, int)
    clean_moved = Signal(object, object)

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self._index = 0  # commands[:index] are applied
        self._clean_index: int | None = 0
        self._merge_barrier = True

    @property
    def index(self) -> int:
        return self._index

    @index.setter
    def index(self, value: int) -> None:
        old = self._index
        if value != old:
            self._index = value
            self.moved.emit(old, value)

    @property
    def clean_index(self) -> int | None:
        return self._clean_index

    @clean_index.setter
    def clean_index(self, value: int | None) -> None:
        old = self._clean_index
        if value != old:
            self._clean_index = value
            self.clean_moved.emit(old, value)

    def push(self, cmd: Command) -> None:
        if self.index < len(self.commands):
            first, last = self.index, len(self.commands) - 1
            self.removing.emit(first, last)
            del self.commands[first:]
            self.removed.emit()
        if self.clean_index is not None and self.clean_index > self.index:
            self.clean_index = None  # the saved state can no longer be reached
        top = self.commands[-1] if self.commands else None
        if (
            top is not None
            and not self._merge_barrier
            and cmd.merge_key is not None
            and cmd.merge_key == top.merge_key
            and self.clean_index != self.index
        ):
            top.absorb(cmd)
            self.merged.emit(len(self.commands) - 1)
        else:
            self.inserting.emit(len(self.commands))
            self.commands.append(cmd)
            self.inserted.emit()
            self.index += 1
        self._merge_barrier = False

    def break_merge(self) -> None:
        """The next command starts a new undo step even if it could merge."""
        self._merge_barrier = True

    @property
    def clean(self) -> bool:
        return self.clean_index == self.index

    def set_clean(self) -> None:
        self.clean_index = self.index
        self._merge_barrier = True

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self.commands)

    @property
    def undo_label(self) -> str:
        return self.commands[self.index - 1].label if self.can_undo else ""

    @property
    def redo_label(self) -> str:
        return self.commands[self.index].label if self.can_redo else ""

    def labels(self) -> list[str]:
        return [c.label for c in self.commands]


def now() -> float:
    return time.monotonic()
