"""``onnx-studio check``: exit codes 0 / 1 / 2, text and JSON output, ``--full``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]


def check(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "widgets", "check", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )


def model(op: str = "Relu", domain: str = "", opsets: tuple = (("", 17),)) -> onnx.ModelProto:
    g = h.make_graph(
        [h.make_node("Relu", ["x"], ["a"], name="r1"),
         h.make_node(op, ["a"], ["y"], name="second", domain=domain)],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])


def test_clean_real_model_exits_0() -> None:
    r = check(CORPUS / "real" / "silero_vad_half.onnx")
    assert r.returncode == 0, r.stderr
    assert "no problems found" in r.stdout
    assert r.stderr == ""


def test_errors_exit_1_and_name_the_node(tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    onnx.save(model("NoSuchOp"), path)
    r = check(path)
    assert r.returncode == 1
    line = next(ln for ln in r.stdout.splitlines() if "[unknown-op]" in ln)
    assert line.startswith("error") and "main:" in line and "'second'" in line and "NoSuchOp" in line
    assert "1 error(s)" in r.stdout


def test_json_output(tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    onnx.save(model("NoSuchOp"), path)
    r = check(path, "--json")
    assert r.returncode == 1
    (rec,) = json.loads(r.stdout)
    assert rec == {
        "severity": "error", "code": "unknown-op", "message": rec["message"], "node": 1,
        "node_name": "second", "op_type": "NoSuchOp", "value": None, "graph": "main", "source": "live",
    }
    clean = tmp_path / "ok.onnx"
    onnx.save(model(), clean)
    r = check(clean, "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == []


def test_notes_alone_exit_0(tmp_path: Path) -> None:
    path = tmp_path / "custom.onnx"
    onnx.save(model("Fancy", "com.example", (("", 17), ("com.example", 1))), path)
    r = check(path, "--json")
    assert r.returncode == 0
    assert [(p["severity"], p["code"]) for p in json.loads(r.stdout)] == [("info", "custom-op")]


def test_full_adds_the_checker_and_strict_inference(tmp_path: Path) -> None:
    m = model()
    m.graph.value_info.append(h.make_tensor_value_info("a", T.INT64, [2, 3]))  # Relu keeps float
    path = tmp_path / "vi.onnx"
    onnx.save(m, path)
    live = check(path, "--json")
    full = check(path, "--json", "--full")
    assert full.returncode == 1
    codes = {(p["code"], p["source"]) for p in json.loads(full.stdout)}
    assert ("type-mismatch", "live") in codes  # declared input x, declared output a: checked live
    assert json.loads(live.stdout) != [] and live.returncode == 1


def test_full_finds_what_only_inference_through_the_graph_sees(tmp_path: Path) -> None:
    m = model()
    m.graph.value_info.append(h.make_tensor_value_info("y", T.INT64, [2, 3]))  # 'a' is not declared
    m.graph.output[0].CopyFrom(h.make_tensor_value_info("y", T.INT64, [2, 3]))
    path = tmp_path / "deep.onnx"
    onnx.save(m, path)
    assert check(path).returncode == 0  # live: the second Relu's input type is unknown
    r = check(path, "--json", "--full")
    assert r.returncode == 1
    recs = json.loads(r.stdout)
    assert [(p["code"], p["source"], p["node_name"]) for p in recs] == [("type-mismatch", "full", "second")]


def test_a_shape_only_onnxruntime_accepts_is_a_warning_in_both_checks(tmp_path: Path) -> None:
    """onnx.checker refuses a declared shape the op contradicts; onnxruntime runs the model
    (it keeps the computed shape): a warning that says which, in the live and the full check."""
    m = model()
    m.graph.value_info.append(h.make_tensor_value_info("y", T.FLOAT, [3, 2]))
    m.graph.output[0].CopyFrom(h.make_tensor_value_info("y", T.FLOAT, [3, 2]))
    path = tmp_path / "shape.onnx"
    onnx.save(m, path)
    r = check(path, "--json", "--full")
    recs = json.loads(r.stdout)
    assert r.returncode == 0, recs
    assert [(p["severity"], p["code"]) for p in recs] == [("warning", "declared-dim")], recs
    assert "onnxruntime accepts" in recs[0]["message"], recs[0]


@pytest.mark.parametrize("content", [None, b"", b"not a model at all \x00\xff", b"\x08"])
def test_unreadable_files_exit_2_with_one_line(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "m.onnx"
    if content is not None:
        path.write_bytes(content)
    r = check(path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr and r.stdout == ""
