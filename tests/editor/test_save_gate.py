"""Saves tell the truth: a CLI save of a model with errors prints them, exits 1 and writes
nothing, unless ``--allow-invalid`` (then it writes the model and still prints them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
NEMO = CORPUS / "real" / "asr_prep_nemo128.onnx"
SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "widgets", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _checker_accepts(path: Path) -> bool:
    try:
        onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    except Exception:  # noqa: BLE001
        return False
    return True


SCRIPTS = {
    # deleting a Cast with reconnect feeds an int64 into a float op
    "delete-cast": (NEMO, "doc.delete_nodes([doc.nodes(op_type='Cast')[0]], reconnect=True)\n"),
    # a 2-D Conv deep in the graph (its input type is computed) given two pads
    "conv-pads": (SQUEEZENET, "doc.set_attribute(doc.nodes(op_type='Conv')[3], 'pads', [1, 1])\n"),
}


@pytest.mark.parametrize("case", sorted(SCRIPTS))
def test_script_refuses_to_save_an_invalid_model(case: str, tmp_path: Path) -> None:
    model, source = SCRIPTS[case]
    script = tmp_path / "edit.py"
    script.write_text(source)
    out = tmp_path / "out.onnx"
    r = cli("script", script, model, "-o", out)
    assert r.returncode == 1 and not out.exists()
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("error:") and "--allow-invalid" in lines[-1]
    assert any(ln.startswith("invalid:") for ln in lines[:-1])
    assert "Traceback" not in r.stderr
    # --allow-invalid writes it, and the errors are still said
    r = cli("script", script, model, "-o", out, "--allow-invalid")
    assert r.returncode == 0 and out.exists()
    assert any(ln.startswith("invalid:") for ln in r.stderr.splitlines())
    assert not _checker_accepts(out)  # what we called invalid, onnx calls invalid too


def test_script_with_a_valid_result_saves_quietly(tmp_path: Path) -> None:
    script = tmp_path / "edit.py"
    script.write_text("doc.set_attribute(doc.nodes(op_type='Conv')[3], 'pads', [1, 1, 1, 1])\n")
    out = tmp_path / "out.onnx"
    r = cli("script", script, SQUEEZENET, "-o", out)
    assert r.returncode == 0 and out.exists() and r.stderr == ""


def test_convert_refuses_an_invalid_model(tmp_path: Path) -> None:
    src = tmp_path / "bad.onnx"
    m = onnx.load(str(SQUEEZENET))
    next(n for n in m.graph.node if n.op_type == "Relu").op_type = "NoSuchOp"
    onnx.save(m, src)
    out = tmp_path / "out.onnx"
    r = cli("convert", src, out)
    assert r.returncode == 1 and not out.exists() and "NoSuchOp" in r.stderr
    r = cli("convert", src, out, "--allow-invalid")
    assert r.returncode == 0 and out.exists()
