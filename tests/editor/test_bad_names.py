"""Names a file should not have, on a real model (onnx-asr's Kaldi preprocessor): bytes that
are not UTF-8, an empty operator type, control characters, a 1 MB name. Every command reads
them without a traceback, shows invalid UTF-8 with U+FFFD, ``check`` reports each as a
problem of the node named by its index, and a save writes the original bytes back."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from editor.cli import main as cli_main
from editor.commands.nodes import SetNodeField
from editor.document import Document
from tests.conftest import CORPUS
from tests.editor.test_summary_support import run_cli

KALDI = CORPUS / "real" / "asr_prep_kaldi.onnx"
NODE = 3


def corrupt(data: bytes, field: bytes, pos: int, byte: bytes) -> bytes:
    """``data`` with the first occurrence of the encoded string ``field`` changed at ``pos``."""
    i = data.index(field)
    return data[: i + pos] + byte + data[i + pos + 1:]


def variants(tmp: Path) -> dict[str, Path]:
    model = onnx.load(KALDI)
    data = model.SerializeToString()
    node = model.graph.node[NODE]
    name = node.name.encode()
    op = node.op_type.encode()
    out = {
        # field tags: NodeProto.name = 3 (0x1a), op_type = 4 (0x22)
        "name": corrupt(data, b"\x1a" + bytes([len(name)]) + name, 2, b"\xff"),
        "op_type": corrupt(data, b"\x22" + bytes([len(op)]) + op, 2, b"\xfe"),
    }
    paths = {}
    for key, blob in out.items():
        paths[key] = tmp / f"{key}.onnx"
        paths[key].write_bytes(blob)
    for key, change in {
        "empty_op": lambda n: setattr(n, "op_type", ""),
        "control": lambda n: setattr(n, "name", "line\nbreak\x1b[31m"),
        "huge": lambda n: setattr(n, "name", "x" * 1_000_000),
    }.items():
        m = onnx.load(KALDI)
        change(m.graph.node[NODE])
        paths[key] = tmp / f"{key}.onnx"
        onnx.save(m, paths[key])
    return paths


@pytest.fixture(scope="module")
def bad(tmp_path_factory) -> dict[str, Path]:
    return variants(tmp_path_factory.mktemp("bad"))


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = cli_main(list(args))
    got = capsys.readouterr()
    assert "Traceback" not in got.err and "unexpected" not in got.err, got.err
    return code, got.out, got.err


@pytest.mark.parametrize("kind,severity", [("name", "warning"), ("op_type", "error"), ("empty_op", "error"),
                                           ("control", "warning"), ("huge", "warning")])
def test_check_reports_the_node_by_index(capsys, bad, kind: str, severity: str) -> None:
    code, out, _ = cli(capsys, "check", str(bad[kind]))
    lines = [line for line in out.splitlines() if "[bad-name]" in line]
    assert lines, out
    assert all(f"node #{NODE} " in line and len(line) < 400 for line in lines), lines
    assert lines[0].startswith(severity)
    assert code == (1 if severity == "error" else 0) or severity == "warning"


@pytest.mark.parametrize("kind", ["name", "op_type", "empty_op", "control", "huge"])
def test_info_render_convert_never_trace_back(capsys, bad, tmp_path: Path, kind: str) -> None:
    assert cli(capsys, "info", str(bad[kind]))[0] == 0
    # render in a child process: Qt stays out of this (editor) test process
    proc = run_cli("render", str(bad[kind]), "-o", str(tmp_path / "g.svg"))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    svg = (tmp_path / "g.svg").read_text(encoding="utf-8")
    if kind == "op_type":  # boxes show operator types (node names only on request)
        assert "\ufffd" in svg
    # a model onnx would refuse (operator type not UTF-8 or empty) is not saved unless asked
    refused = kind in ("op_type", "empty_op")
    code, _, err = cli(capsys, "convert", str(bad[kind]), str(tmp_path / "out.onnx"))
    assert code == (1 if refused else 0), err
    assert (tmp_path / "out.onnx").exists() != refused
    code, _, err = cli(capsys, "convert", str(bad[kind]), str(tmp_path / "out.onnx"), "--allow-invalid")
    assert code == 0, err
    assert (tmp_path / "out.onnx").read_bytes() == bad[kind].read_bytes()


@pytest.mark.parametrize("kind", ["name", "op_type"])
def test_original_bytes_survive_an_edit_and_a_save(bad, tmp_path: Path, kind: str) -> None:
    doc = Document.open(bad[kind])
    bad_node = doc.model.graph.node[NODE]
    shown = bad_node.name if kind == "name" else bad_node.op_type
    assert "\ufffd" in shown and isinstance(shown, str)
    other = doc.main.node_ids[0]
    doc.execute(SetNodeField(other, "name", "renamed_first"))
    doc.save(tmp_path / "edited.onnx")
    saved = (tmp_path / "edited.onnx").read_bytes()
    raw = b"\xff" if kind == "name" else b"\xfe"
    original = onnx.load(bad[kind]).graph.node[NODE]
    field = original.name if kind == "name" else original.op_type
    assert isinstance(field, bytes) and raw in field
    assert field in saved  # the node's original bytes, not the repaired text
    again = onnx.ModelProto.FromString(saved)
    assert again.graph.node[0].name == "renamed_first"
    # renaming the bad node itself saves the new (valid) name
    doc.execute(SetNodeField(doc.main.node_ids[NODE], "name", "fixed"))
    doc.save(tmp_path / "fixed.onnx")
    assert onnx.load(tmp_path / "fixed.onnx").graph.node[NODE].name == "fixed"
