"""Bad input to the file-reading subcommands, run as a user would (``python -m editor.cli``).

Every case is built in ``tmp_path``. For each one, ``info``, ``convert`` (and ``check`` once
it exists) must print exactly one line on stderr starting with ``error:``, exit with 2,
print no traceback, and write nothing (``convert`` leaves its output folder empty).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper

from tests.conftest import CORPUS
from tests.editor.test_summary_support import external_model, model_with, run_cli, with_external_entry
from tests.tools.cli_forks import run_many

SMALL_REAL = CORPUS / "real" / "magika_standard_v3_3.onnx"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _ext(tmp: Path) -> Path:
    return external_model(tmp, {"w": np.arange(256, dtype=np.float32), "v": np.ones(16, np.int64)}, data="w.bin")


def missing_file(tmp: Path) -> Path:
    return tmp / "no_such_model.onnx"


def folder(tmp: Path) -> Path:
    (tmp / "dir.onnx").mkdir()
    return tmp / "dir.onnx"


def empty_file(tmp: Path) -> Path:
    (tmp / "empty.onnx").write_bytes(b"")
    return tmp / "empty.onnx"


def plain_text(tmp: Path) -> Path:
    (tmp / "notes.onnx").write_text("these are my notes, not a model\n")
    return tmp / "notes.onnx"


def png(tmp: Path) -> Path:
    data = b"\x89PNG\r\n\x1a\n" + np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes()
    (tmp / "picture.onnx").write_bytes(data)
    return tmp / "picture.onnx"


def truncated(tmp: Path) -> Path:
    data = SMALL_REAL.read_bytes()
    (tmp / "truncated.onnx").write_bytes(data[: len(data) * 3 // 5])
    return tmp / "truncated.onnx"


def corrupt_header(tmp: Path) -> Path:
    data = SMALL_REAL.read_bytes()
    (tmp / "corrupt.onnx").write_bytes(data[:10] + b"\xff" * 16 + data[26:])
    return tmp / "corrupt.onnx"


def absurd_length_prefix(tmp: Path) -> Path:
    # a valid model followed by a 'graph' field that claims to be 2 GB long
    (tmp / "length.onnx").write_bytes(SMALL_REAL.read_bytes() + b"\x3a" + _varint(2**31) + b"abc")
    return tmp / "length.onnx"


def missing_data_file(tmp: Path) -> Path:
    p = _ext(tmp)
    (tmp / "w.bin").unlink()
    return p


def short_data_file(tmp: Path) -> Path:
    p = _ext(tmp)
    with open(tmp / "w.bin", "r+b") as f:
        f.truncate(100)
    return p


def dotdot_location(tmp: Path) -> Path:
    inner = tmp / "models"
    inner.mkdir()
    p = _ext(inner)
    os.replace(inner / "w.bin", tmp / "w.bin")  # the data exists, but outside the model's folder
    with_external_entry(p, 0, location="../w.bin")
    with_external_entry(p, 1, location="../w.bin")
    return p


def absolute_location(tmp: Path) -> Path:
    p = _ext(tmp)
    with_external_entry(p, 0, location=str(tmp / "w.bin"))
    return p


def symlink_data(tmp: Path) -> Path:
    inner = tmp / "models"
    inner.mkdir()
    p = _ext(inner)
    os.replace(inner / "w.bin", tmp / "real.bin")
    os.symlink(tmp / "real.bin", inner / "w.bin")
    return p


def hardlink_data(tmp: Path) -> Path:
    p = _ext(tmp)
    os.link(tmp / "w.bin", tmp / "other_name.bin")  # e.g. /etc/shadow linked into a download folder
    return p


def absurd_external_length(tmp: Path) -> Path:
    p = _ext(tmp)
    with_external_entry(p, 0, length="99999999999999999999999999")
    return p


def absurd_external_offset(tmp: Path) -> Path:
    p = _ext(tmp)
    with_external_entry(p, 0, offset=str(2**62))
    return p


def absurd_dims(tmp: Path) -> Path:
    t = numpy_helper.from_array(np.ones(4, np.float32), "w")
    del t.dims[:]
    t.dims.extend([2**40, 2**40, 2**40])
    (tmp / "dims.onnx").write_bytes(model_with([t]).SerializeToString())
    return tmp / "dims.onnx"


def negative_dims(tmp: Path) -> Path:
    t = numpy_helper.from_array(np.ones(4, np.float32), "w")
    del t.dims[:]
    t.dims.extend([-4])
    (tmp / "neg.onnx").write_bytes(model_with([t]).SerializeToString())
    return tmp / "neg.onnx"


def dims_larger_than_file(tmp: Path) -> Path:
    t = numpy_helper.from_array(np.ones(4, np.float32), "w")
    del t.dims[:]
    t.dims.extend([1 << 20, 1 << 10])  # 4 GiB claimed by a file of a few hundred bytes
    const = helper.make_node("Constant", [], ["c"], value=t)
    (tmp / "big.onnx").write_bytes(model_with([], [const], outputs=["c"]).SerializeToString())
    return tmp / "big.onnx"


def bad_text_syntax(tmp: Path) -> Path:
    (tmp / "broken.onnxtxt").write_text("<ir_version: 8, opset_import: [\"\" : 18]>\nG (float x) => (y) { y = Relu(\n")
    return tmp / "broken.onnxtxt"


CASES: list[Callable[[Path], Path]] = [
    missing_file, folder, empty_file, plain_text, png, truncated, corrupt_header, absurd_length_prefix,
    missing_data_file, short_data_file, dotdot_location, absolute_location, symlink_data, hardlink_data,
    absurd_external_length, absurd_external_offset, absurd_dims, negative_dims, dims_larger_than_file,
    bad_text_syntax,
]

COMMANDS = ["info", "convert", "check"]


def _snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _assert_one_error_line(proc, what: str) -> None:
    assert proc.returncode == 2, f"{what}: exit {proc.returncode}, stderr={proc.stderr!r}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, f"{what}: stderr has {len(lines)} lines: {proc.stderr!r}"
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in proc.stderr and "unexpected" not in lines[0], lines[0]
    assert proc.stdout == ""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build every case and run every command on it, each in a process of its own.

    NOTE: the 60 runs are forked from one interpreter that imported the command line once
    (tests/tools/cli_forks.py): a Python start-up and ``import onnx`` per run cost this file
    25 s of both cores. The real entry point (``python -m widgets``) is still what the other
    tests here run. Each result records the folder snapshots taken around its run.
    """
    jobs = []
    for make in CASES:
        for command in COMMANDS:
            root = tmp_path_factory.mktemp(f"{make.__name__}_{command}")
            work = root / "in"
            work.mkdir()
            model = make(work)
            args = [command, str(model)]
            if command == "convert":
                (root / "out").mkdir()
                args.append(str(root / "out" / "converted.onnx"))
            jobs.append(((make.__name__, command), root, args))
    before = {key: _snapshot(root) for key, root, _ in jobs}
    procs = run_many([(args, root) for _, root, args in jobs], preload=tuple(f"editor.cli.{c}" for c in COMMANDS))
    return {key: (proc, before[key], _snapshot(root)) for (key, root, _), proc in zip(jobs, procs)}


@pytest.mark.timeout(300)  # the first one pays for the module fixture's 60 runs
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("make", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input(make: Callable[[Path], Path], command: str, results: dict) -> None:
    proc, before, after = results[(make.__name__, command)]
    _assert_one_error_line(proc, f"{command} {make.__name__}")
    assert after == before  # nothing written anywhere: no output, no temp file


def test_messages_quote_the_offending_value(tmp_path: Path) -> None:
    """A few messages checked for content: the user must learn *what* is wrong."""
    expected = {
        missing_file: "no_such_model.onnx",
        dotdot_location: "'../w.bin'",
        absolute_location: "absolute path",
        symlink_data: "symlink",
        hardlink_data: "hard link",
        short_data_file: "too short",
        absurd_dims: "absurd dims",
    }
    runs = []
    for make in expected:
        work = tmp_path / make.__name__
        work.mkdir()
        runs.append((["info", str(make(work))], work))
    for (make, needle), proc in zip(expected.items(), run_many(runs, preload=("editor.cli.info",))):
        assert needle in proc.stderr, (make.__name__, proc.stderr)


def test_convert_does_not_replace_an_existing_output_on_failure(tmp_path: Path) -> None:
    bad = truncated(tmp_path)
    out = tmp_path / "existing.onnx"
    out.write_bytes(b"previous content")
    proc = run_cli("convert", str(bad), str(out), cwd=tmp_path)
    _assert_one_error_line(proc, "convert over existing")
    assert out.read_bytes() == b"previous content"


def test_good_input_control(tmp_path: Path) -> None:
    """The same harness on good input succeeds (so the failures above are not an artefact)."""
    model = _ext(tmp_path)
    assert run_cli("info", str(model)).returncode == 0
    proc = run_cli("convert", str(model), str(tmp_path / "copy.onnx"), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert (tmp_path / "copy.onnx").exists()
