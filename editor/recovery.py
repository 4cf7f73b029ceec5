"""Crash recovery: a recent copy of every modified document, so a crash loses seconds.

The GUI calls :meth:`RecoveryStore.write` a few seconds after each edit (and
:meth:`RecoveryStore.discard` on save or close). A recovery entry is the serialized model
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
import time
from dataclasses import dataclass
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with Transaction() as tx:
        tx.open(path).write(data)
        tx.commit()


class RecoveryStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_recovery_dir()

    @staticmethod
    def key_for(doc: Document) -> str:
        ident = str(doc.path.resolve()) if doc.path is not None else f"untitled-{id(doc)}-{os.getpid()}"
        return hashlib.sha1(ident.encode()).hexdigest()[:16]

    def write(self, doc: Document) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        key = self.key_for(doc)
        model_file = self.directory / f"{key}.onnx"
        atomic_write_bytes(model_file, doc.serialize())
        meta = {
            "original": str(doc.path.resolve()) if doc.path is not None else None,
            "saved_at": time.time(),
            "label": doc.stack.undo_label,
            "pid": os.getpid(),
        }
        atomic_write_bytes(self.directory / f"{key}.json", json.dumps(meta).encode())
        return model_file

    def discard(self, doc: Document) -> None:
        key = self.key_for(doc)
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
