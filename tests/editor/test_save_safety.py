"""A save never destroys its own input, never takes a control character for a file name,
and cleans up after itself: what an interrupted save left, and folders a failed save made.

Every case runs on a real model (magika, 3 MB of weights) moved to external data.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from editor.cli import main as cli_main
from editor.document import Document
from editor.errors import SaveError
from editor.io import SaveOptions, load_model, save_model, tensor_to_numpy
from editor.io import atomic

MODEL = "magika_standard_v3_3.onnx"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def weights(path: Path) -> dict[str, np.ndarray]:
    loaded = load_model(path)
    try:
        return {t.name: np.array(tensor_to_numpy(t, loaded.store)) for t in loaded.model.graph.initializer}
    finally:
        loaded.close()


@pytest.fixture(scope="module")
def external(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("ext")
    doc = Document.open(corpus_dir / "real" / MODEL)
    doc.save(folder / "M.onnx", options=SaveOptions(external="single-file", location="M.onnx.data"))
    assert (folder / "M.onnx.data").stat().st_size > 1_000_000
    return folder


@pytest.fixture
def work(external: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "w"
    shutil.copytree(external, folder)
    return folder


def refused(capsys, *args: str) -> str:
    code = cli_main(["convert", *args])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


# ------------------------------------------------------------------ a save never clobbers its input


def test_model_over_its_own_data_file_is_refused(work: Path, capsys) -> None:
    before = snapshot(work)
    err = refused(capsys, str(work / "M.onnx"), str(work / "M.onnx.data"))
    assert "M.onnx.data" in err
    assert snapshot(work) == before


def test_model_over_a_symlink_to_its_data_file_is_refused(work: Path, capsys) -> None:
    os.symlink("M.onnx.data", work / "alias.onnx")
    before = snapshot(work)
    refused(capsys, str(work / "M.onnx"), str(work / "alias.onnx"))
    assert snapshot(work) == before
    assert (work / "alias.onnx").is_symlink()


def test_data_file_over_the_model_it_reads_is_refused(work: Path, capsys) -> None:
    before = snapshot(work)
    refused(capsys, str(work / "M.onnx"), str(work / "out.onnx"), "--external-data", "M.onnx")
    assert snapshot(work) == before


def test_data_file_over_a_hard_link_of_the_model_is_refused(work: Path, capsys) -> None:
    os.link(work / "M.onnx", work / "twin.onnx")
    before = snapshot(work)
    refused(capsys, str(work / "M.onnx"), str(work / "out.onnx"), "--external-data", "twin.onnx")
    assert snapshot(work) == before


def test_data_file_named_as_the_model_is_refused(work: Path, capsys) -> None:
    before = snapshot(work)
    refused(capsys, str(work / "M.onnx"), str(work / "M.onnx"), "--external-data", "M.onnx")
    assert snapshot(work) == before


def test_in_place_rewrite_of_its_own_data_file_still_works(work: Path, capsys) -> None:
    """The save the issue's first item makes: same names, other threshold, new layout."""
    want = weights(work / "M.onnx")
    old_size = (work / "M.onnx.data").stat().st_size
    code = cli_main(["convert", str(work / "M.onnx"), str(work / "M.onnx"), "--external-data", "M.onnx.data",
                     "--size-threshold", "1048576"])
    assert code == 0, capsys.readouterr().err
    assert (work / "M.onnx.data").stat().st_size != old_size
    got = weights(work / "M.onnx")
    assert got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in want)
    assert sorted(p.name for p in work.iterdir()) == ["M.onnx", "M.onnx.data"]


# ------------------------------------------------------------------ control characters


@pytest.mark.parametrize("name", ["a\nb.data", "w\x1b[31m.bin", "tab\there.bin", "del\x7f.bin", "c1\x85.bin"])
def test_control_characters_in_a_data_file_name_are_refused(work: Path, capsys, name: str) -> None:
    before = snapshot(work)
    err = refused(capsys, str(work / "M.onnx"), str(work / "out.onnx"), "--external-data", name)
    assert "control character" in err
    assert snapshot(work) == before


# ------------------------------------------------------------------ leftovers


def test_next_save_removes_what_killed_saves_left(work: Path) -> None:
    """Leftovers as a killed save leaves them (dead writer), old releases' names included."""
    dead = 2**22 + 12345  # above the default pid_max: no such process
    while True:
        try:
            os.kill(dead, 0)
        except ProcessLookupError:
            break
        dead += 1
    junk = [
        f".M.onnx.{dead}-0123abcd.tmp", f".M.onnx.data.{dead}-89abcdef.part", ".M.onnx.k3j_9x2a.tmp",
        ".M.onnx.data.0123456789ab.bak", f".other.onnx.{dead}-00000000.tmp",
    ]
    for name in junk:
        (work / name).write_bytes(b"x" * 100)
    # someone else's data leftovers and a live writer's temp files are not ours to remove
    alive = [f".other.onnx.data.{dead}-11111111.part", f".M.onnx.{os.getppid()}-22222222.tmp"]
    for name in alive:
        (work / name).write_bytes(b"y")
    doc = Document.open(work / "M.onnx")
    doc.save()
    doc.store.close()
    assert sorted(p.name for p in work.iterdir()) == sorted(["M.onnx", "M.onnx.data", *alive])


def test_failed_save_removes_the_folders_it_made(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = Document.open(work / "M.onnx")
    before = snapshot(work)
    real = atomic._write

    def full_disk(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_write", full_disk)
    with pytest.raises(SaveError, match="No space"):
        doc.save(work / "out.onnx", options=SaveOptions(external="single-file", location="deep/er/w.bin"))
    monkeypatch.setattr(atomic, "_write", real)
    doc.store.close()
    assert snapshot(work) == before
    assert not (work / "deep").exists()


def test_refusal_in_core_save_names_the_file(work: Path) -> None:
    loaded = load_model(work / "M.onnx")
    with pytest.raises(SaveError, match="reads its weights from"):
        save_model(loaded.model, work / "M.onnx.data", store=loaded.store)
    loaded.close()


def test_model_write_failure_takes_back_new_data_files(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data file already sits under its (free) name when the model write fails: it goes."""
    doc = Document.open(work / "M.onnx")
    out = work / "out"
    out.mkdir()
    real_init = atomic.AtomicFile.__init__

    def failing_model(self, target, kind="tmp"):
        if target.name == "new.onnx":
            raise OSError(28, "No space left on device")
        real_init(self, target, kind)

    monkeypatch.setattr(atomic.AtomicFile, "__init__", failing_model)
    with pytest.raises(SaveError, match="No space"):
        doc.save(out / "new.onnx", options=SaveOptions(external="single-file", location="new.data"))
    doc.store.close()
    assert list(out.iterdir()) == []
