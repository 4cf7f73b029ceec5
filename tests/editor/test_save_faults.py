"""A two-file save killed at each of its file-system steps leaves the old model or the new one.

The model is a real one (faster-whisper's Silero VAD, LSTM weights) moved to external data;
the "new" save rewrites it in place with other weights and another size threshold, so the
old and the new data files differ in layout and in values: a torn folder cannot pass for
either. A forked child runs the save and SIGKILLs itself at step k (the kill a power cut or
the OOM killer would give); the folder must then load, with our loader and with onnx's, as
exactly the old model or exactly the new one, and the next save must leave no leftovers.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import editor.io.atomic as atomic
from editor.commands.initializers import ReplaceInitializer
from editor.document import Document
from editor.errors import LoadError
from editor.io import SaveOptions, load_model, tensor_to_numpy

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to kill a save mid-way")

MODEL = "fw_silero_vad_v6.onnx"
OLD = SaveOptions(external="single-file", location="m.onnx.data", size_threshold=1024)
NEW = SaveOptions(external="single-file", location="m.onnx.data", size_threshold=65536)
#: the same save to a data file name that is still free (a rename alone places it)
NEW_NAME = SaveOptions(external="single-file", location="weights/m2.bin", size_threshold=65536)


def weights_of(folder: Path) -> dict[str, np.ndarray]:
    loaded = load_model(folder / "m.onnx")
    try:
        return {t.name: np.array(tensor_to_numpy(t, loaded.store)) for t in loaded.model.graph.initializer}
    finally:
        loaded.close()


def onnx_weights_of(folder: Path) -> dict[str, np.ndarray]:
    model = onnx.load(os.fspath(folder / "m.onnx"))  # onnx's own reader, external data included
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> tuple[Path, dict, dict]:
    """A folder with the old model (m.onnx + m.onnx.data), and the old and new weights."""
    folder = tmp_path_factory.mktemp("old")
    doc = Document.open(corpus_dir / "real" / MODEL)
    doc.save(folder / "m.onnx", options=OLD)
    old = weights_of(folder)
    doc2, name = edited(folder)
    new = {k: v.copy() for k, v in old.items()}
    new[name] = changed(old[name])
    doc2.store.close()
    return folder, old, new


def biggest(doc: Document) -> onnx.TensorProto:
    return max(doc.model.graph.initializer, key=lambda t: int(np.prod(t.dims)))


def changed(arr: np.ndarray) -> np.ndarray:
    return (arr * -2 + 1).astype(arr.dtype)


def edited(folder: Path) -> tuple[Document, str]:
    """The model of ``folder`` opened, with its biggest weight changed (unsaved)."""
    doc = Document.open(folder / "m.onnx")
    t = biggest(doc)
    doc.execute(ReplaceInitializer(doc.index.main, t.name, changed(np.array(tensor_to_numpy(t, doc.store)))))
    return doc, t.name


def count_steps(folder: Path, options: SaveOptions = NEW) -> list[str]:
    steps: list[str] = []
    doc, _ = edited(folder)
    atomic.fault_hook = steps.append
    try:
        doc.save(options=options)
    finally:
        atomic.fault_hook = atomic._no_fault
        doc.store.close()
    return steps


def save_killed_at(folder: Path, k: int, options: SaveOptions = NEW) -> bool:
    """Run the NEW save in a child that SIGKILLs itself before step ``k``; True if it was killed."""
    doc, _ = edited(folder)
    pid = os.fork()
    if pid == 0:  # child: no pytest machinery from here on, only os._exit
        try:
            seen = [0]

            def hook(step: str) -> None:
                if seen[0] == k:
                    os.kill(os.getpid(), signal.SIGKILL)
                seen[0] += 1

            atomic.fault_hook = hook
            doc.save(options=options)
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    doc.store.close()
    assert not os.WIFEXITED(status) or os.WEXITSTATUS(status) == 0, "the save failed in the child"
    return os.WIFSIGNALED(status)


def test_the_save_has_the_steps_worth_killing(states, tmp_path: Path) -> None:
    folder, _, new = states
    work = tmp_path / "w"
    shutil.copytree(folder, work)
    steps = count_steps(work)
    kinds = {s.split()[0] for s in steps}
    assert {"create", "write", "fsync", "rename", "copy", "unlink"} <= kinds, steps
    assert same(weights_of(work), new)
    assert hidden(work) == []


@pytest.mark.timeout(180)
@pytest.mark.parametrize("options", [NEW, NEW_NAME], ids=["rewrite-data-in-place", "new-data-name"])
def test_kill_at_every_step_leaves_old_or_new(states, tmp_path: Path, options: SaveOptions) -> None:
    folder, old, new = states
    probe = tmp_path / "probe"
    shutil.copytree(folder, probe)
    n = len(count_steps(probe, options))
    outcomes = []
    for k in range(n + 1):
        work = tmp_path / f"k{k}"
        shutil.copytree(folder, work)
        killed = save_killed_at(work, k, options)
        assert killed == (k < n)
        got = weights_of(work)
        is_old, is_new = same(got, old), same(got, new)
        assert is_old or is_new, f"killed before step {k}: the folder holds neither model"
        ours = onnx_weights_of(work)
        assert same(ours, got), f"killed before step {k}: onnx reads other weights than we do"
        outcomes.append("old" if is_old else "new")
        # the next save of the same file removes what the killed one left
        doc = Document.open(work / "m.onnx")
        doc.save(options=options)
        doc.store.close()
        assert hidden(work) == [], f"killed before step {k}: leftovers after the next save"
        if (work / "weights").is_dir():
            assert hidden(work / "weights") == []
        assert same(weights_of(work), got)
    # the commit point is one step: old up to it, new from it on
    assert outcomes == sorted(outcomes, key=lambda o: o == "new") and "old" in outcomes and "new" in outcomes
