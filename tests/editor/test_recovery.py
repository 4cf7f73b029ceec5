"""Recovery copies: written atomically, listed after a 'crash', reopened with the edits."""

from __future__ import annotations

from pathlib import Path

import onnx

from editor.commands import SetModelField
from editor.document import Document
from editor.recovery import RecoveryStore
from tests.conftest import CORPUS


def test_recovery_round_trip(tmp_path: Path) -> None:
    src = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    doc = Document.open(src)
    doc.execute(SetModelField("producer_name", "edited"))
    store = RecoveryStore(tmp_path / "rec")
    store.write(doc)
    entries = RecoveryStore(tmp_path / "rec").entries()  # a new session finds it
    assert len(entries) == 1 and entries[0].original == src.resolve()
    assert entries[0].label.startswith("Set model producer")
    recovered = entries[0].open()
    assert recovered.model.producer_name == "edited"
    assert recovered.path == src.resolve()
    store.discard(doc)
    assert store.entries() == []


def test_recovery_of_new_model(tmp_path: Path) -> None:
    doc = Document.new()
    store = RecoveryStore(tmp_path)
    store.write(doc)
    (entry,) = store.entries()
    assert entry.original is None
    assert onnx.load(str(entry.model_file)).graph.name == "main"
    store.remove(entry)
    assert not any(tmp_path.iterdir())


def test_a_discard_after_the_snapshot_wins(tmp_path: Path) -> None:
    """The window takes a snapshot on the GUI thread and writes it on another: a save or
    close in between (discard) must not be undone by the late write."""
    doc = Document.new()
    store = RecoveryStore(tmp_path)
    late = store.snapshot(doc)
    store.discard(doc)
    assert store.write_snapshot(late) is None
    assert store.entries() == [], "a copy discarded after its snapshot came back"
    # a snapshot taken after the discard is written as usual
    assert store.write_snapshot(store.snapshot(doc)) is not None
    assert len(store.entries()) == 1
