"""Crash recovery: a recent copy of every modified document, so a crash loses seconds.

The GUI calls :meth:`RecoveryStore.write` a few seconds after each edit (and
:meth:`RecoveryStore.discard` on save or close). The window splits a write in two: the
:meth:`RecoveryStore.snapshot` (the model's bytes, taken where the model is edited) and
:meth:`RecoveryStore.write_snapshot`, which may run on another thread (the file write and
its fsync are most of a write's time on a large model). A discard made after a snapshot
wins: that snapshot is never written, so a saved or closed document leaves no copy behind. A recovery entry is the serialized model
(external tensors stay references to the original data files, which are not copied) and a
small JSON record of where it came from. On start-up, :meth:`RecoveryStore.entries` lists
what a previous session left behind.

Writes are atomic (temporary file + rename) so a crash during a write leaves the previous
recovery copy intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from editor.document import Document
from editor.io.atomic import Transaction


def default_recovery_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "onnx-studio" / "recovery"


@dataclass(frozen=True)
class RecoveryEntry:
    key: str
    model_file: Path
    original: Path | None  # the file the document came from (None: a new model)
    saved_at: float  # time.time() of the recovery write
    label: str  # last edit's label

    def open(self) -> Document:
        """The recovered document; external data resolves against the original folder."""
        from editor.io import load_model

        data_dir = self.original.parent if self.original is not None else None
        loaded = load_model(self.model_file, data_dir=data_dir)
        doc = Document(loaded.model, path=self.original, store=loaded.store, format="binary")
        return doc


def atomic_write_bytes(path: Path, *data: bytes) -> None:
    with Transaction() as tx:
        f = tx.open(path)
        for piece in data:
            f.write(piece)
        tx.commit()


@dataclass(frozen=True)
class RecoverySnapshot:
    """What one recovery write puts on disk, taken at one moment of the document."""

    key: str
    model_parts: tuple[bytes, ...] = field(repr=False)  # joined, the serialized model
    meta: dict = field(repr=False)
    generation: int = 0  # the key's discard count when taken (a later discard drops it)


class RecoveryStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_recovery_dir()
        # writes (any thread) and discards (the GUI thread) of one store are serialised;
        # a key's generation counts its discards so a snapshot taken before one is dropped
        self._lock = threading.Lock()
        self._generation: dict[str, int] = {}

    @staticmethod
    def key_for(doc: Document) -> str:
        ident = str(doc.path.resolve()) if doc.path is not None else f"untitled-{id(doc)}-{os.getpid()}"
        return hashlib.sha1(ident.encode()).hexdigest()[:16]

    def write(self, doc: Document) -> Path:
        written = self.write_snapshot(self.snapshot(doc))
        assert written is not None  # nothing can discard between the two calls here
        return written

    def snapshot(self, doc: Document, parts: Sequence[bytes] | None = None) -> RecoverySnapshot:
        """The document's recovery copy as bytes (read the model on the thread that edits it).
        ``parts``: the model already serialized in pieces (editor.io.wire_parts), taken
        since its last change."""
        key = self.key_for(doc)
        meta = {
            "original": str(doc.path.resolve()) if doc.path is not None else None,
            "saved_at": time.time(),
            "label": doc.stack.undo_label,
            "pid": os.getpid(),
        }
        with self._lock:
            generation = self._generation.get(key, 0)
        model_parts = tuple(parts) if parts is not None else (doc.serialize(),)
        return RecoverySnapshot(key, model_parts, meta, generation)

    def write_snapshot(self, snap: RecoverySnapshot) -> Path | None:
        """Put ``snap`` on disk (atomically; any thread). None when the document's copy was
        discarded after the snapshot was taken (saved or closed meanwhile): nothing written."""
        with self._lock:
            if self._generation.get(snap.key, 0) != snap.generation:
                return None
            self.directory.mkdir(parents=True, exist_ok=True)
            model_file = self.directory / f"{snap.key}.onnx"
            atomic_write_bytes(model_file, *snap.model_parts)
            atomic_write_bytes(self.directory / f"{snap.key}.json", json.dumps(snap.meta).encode())
            return model_file

    def discard(self, doc: Document) -> None:
        key = self.key_for(doc)
        with self._lock:  # waits for a write in progress, then no older snapshot is written
            self._generation[key] = self._generation.get(key, 0) + 1
            for suffix in (".onnx", ".json"):
                try:
                    (self.directory / f"{key}{suffix}").unlink()
                except FileNotFoundError:
                    pass

    def entries(self) -> list[RecoveryEntry]:
        out = []
        if not self.directory.is_dir():
            return out
        for meta_file in sorted(self.directory.glob("*.json")):
            model_file = meta_file.with_suffix(".onnx")
            try:
                meta = json.loads(meta_file.read_text())
            except (OSError, ValueError):
                continue
            if not model_file.is_file():
                continue
            original = Path(meta["original"]) if meta.get("original") else None
            out.append(RecoveryEntry(meta_file.stem, model_file, original, float(meta.get("saved_at", 0)),
                                     str(meta.get("label", ""))))
        return out

    def remove(self, entry: RecoveryEntry) -> None:
        for p in (entry.model_file, entry.model_file.with_suffix(".json")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass
