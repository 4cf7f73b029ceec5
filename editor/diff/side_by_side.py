"""Two models made ready to be drawn side by side: both documents, their diff and its
display data, in phases that report progress and can be cancelled between them.

The window's diff view runs :func:`side_by_side` off the GUI thread; ``onnx-studio diff
--render`` runs it in the foreground. A side is a model path, a ``ModelProto`` (a
snapshot of an open document) or a :class:`~editor.document.Document`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Union

import onnx

from editor.errors import StudioError

if TYPE_CHECKING:
    from editor.diff.display import DiffDisplay
    from editor.diff.records import ModelDiff
    from editor.document import Document
    from editor.io.external import ExternalDataStore

__all__ = ["Cancelled", "Side", "SideBySide", "side_by_side"]


class Cancelled(StudioError):
    """The user cancelled; nothing was kept."""


@dataclass
class Side:
    """One side to compare: ``source`` is a path, a ModelProto or a Document; a ModelProto
    with external data reads it through ``store`` (the open document's, borrowed)."""

    source: Union[str, os.PathLike, onnx.ModelProto, "Document"]
    store: ExternalDataStore | None = None
    name: str = ""


@dataclass
class SideBySide:
    doc_a: Document
    doc_b: Document
    diff: ModelDiff
    display: DiffDisplay
    #: phase -> seconds ("open A", "open B", "diff", "display")
    seconds: dict[str, float] = field(default_factory=dict)
    #: which documents were opened here (their external data stores are ours to close)
    owned: tuple[bool, bool] = (False, False)

    def close(self) -> None:
        """Release the stores of the documents opened here (never a borrowed one)."""
        for doc, mine in ((self.doc_a, self.owned[0]), (self.doc_b, self.owned[1])):
            if mine and doc.store is not None:
                doc.store.close()


def _open(side: Side) -> tuple[Document, bool]:
    from editor.document import Document

    src = side.source
    if isinstance(src, Document):
        return src, False
    if isinstance(src, onnx.ModelProto):
        return Document(src, store=side.store), False
    return Document.open(Path(src)), True


def side_by_side(a: Side, b: Side, *, progress: Callable[[str, float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, rtol: float = 1e-5, atol: float = 1e-8) -> SideBySide:
    """Open both sides, diff them (weights equal within ``rtol`` / ``atol``, as
    :func:`editor.diff.diff_models`) and make the display data. ``progress(what, fraction)``
    is called at each phase; ``cancelled()`` is asked between phases (raises
    :class:`Cancelled`, closing what was opened)."""
    from editor.diff.display import display_of
    from editor.diff.matcher import diff_models

    seconds: dict[str, float] = {}
    opened: list[tuple[Document, bool]] = []

    def step(what: str, fraction: float) -> float:
        if cancelled is not None and cancelled():
            for doc, mine in opened:
                if mine and doc.store is not None:
                    doc.store.close()
            raise Cancelled("cancelled")
        if progress is not None:
            progress(what, fraction)
        return time.perf_counter()

    t = step(f"Opening {a.name or 'A'}…", 0.0)
    opened.append(_open(a))
    seconds["open A"] = time.perf_counter() - t
    t = step(f"Opening {b.name or 'B'}…", 0.2)
    opened.append(_open(b))
    seconds["open B"] = time.perf_counter() - t
    (doc_a, own_a), (doc_b, own_b) = opened
    t = step("Matching the two models…", 0.4)
    diff = diff_models(doc_a, doc_b, rtol=rtol, atol=atol)
    seconds["diff"] = time.perf_counter() - t
    t = step("Colouring the changes…", 0.85)
    display = display_of(diff, doc_a, doc_b)
    seconds["display"] = time.perf_counter() - t
    step("Done", 1.0)
    return SideBySide(doc_a, doc_b, diff, display, seconds, (own_a, own_b))
