"""``onnx-studio info``: ``--json`` matches an independent walk with plain onnx on every real
model and a sample of the backend models; the text form is compact and complete."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from editor.cli import main as cli_main
from tests.conftest import CORPUS, corpus_models, real_models
from tests.editor.test_summary_support import FUNCTION_MODEL, external_model, reference_info, run_cli

_SPECIAL = [
    "node/test_if/model.onnx",
    "node/test_if_seq/model.onnx",
    "node/test_loop11/model.onnx",
    "node/test_loop16_seq_none/model.onnx",
    "node/test_scan9_sum/model.onnx",
    "node/test_sequence_map_add_2_sequences/model.onnx",
    "node/test_affine_grid_2d_expanded/model.onnx",
    "node/test_range_float_type_positive_delta_expanded/model.onnx",
    "node/test_flexattention_causal_mask/model.onnx",
    "node/test_cast_INT4_to_FLOAT/model.onnx",
    "node/test_cast_FLOAT_to_FLOAT8E4M3FN/model.onnx",
    "node/test_constant/model.onnx",
    "light/light_inception_v1.onnx",
    "light/light_densenet121.onnx",
]


def _sample() -> list[Path]:
    backend = corpus_models(real=False)
    picked = backend[::40] + [CORPUS / "onnx-backend" / s for s in _SPECIAL]
    seen: set[Path] = set()
    return [p for p in picked if p.exists() and not (p in seen or seen.add(p))]


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" if p.name == "model.onnx" else p.name for p in paths]


def _info_json(path: Path, capsys) -> dict:
    assert cli_main(["info", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _check_against_reference(got: dict, want: dict) -> None:
    for key in ("ir_version", "producer_name", "opset_imports", "nodes", "nodes_total", "initializers",
                "weight_bytes", "op_types", "constants"):
        assert got[key] == want[key], key
    for side in ("inputs", "outputs"):
        assert len(got[side]) == len(want[side])
        for g, w in zip(got[side], want[side], strict=True):
            assert g["name"] == w["name"]
            assert isinstance(g["elem_type"], str) and g["elem_type"]
            if w["elem_type"] is not None:  # tensors; other kinds checked by type expression
                assert g["elem_type"] == w["elem_type"]
                assert g["shape"] == w["shape"]
            else:
                assert g["kind"] != "tensor" and g["shape"] is None
    assert [(f["domain"], f["name"], f["nodes"]) for f in got["functions"]] == want["functions"]


@pytest.mark.parametrize("path", real_models(), ids=_ids(real_models()))
def test_info_json_real_models(path: Path, capsys) -> None:
    _check_against_reference(_info_json(path, capsys), reference_info(path))


@pytest.mark.parametrize("path", _sample(), ids=_ids(_sample()))
def test_info_json_backend_sample(path: Path, capsys) -> None:
    _check_against_reference(_info_json(path, capsys), reference_info(path))


def test_sample_covers_subgraphs_and_enough_models() -> None:
    sample = _sample()
    assert len(sample) >= 50
    with_subgraphs = [p for p in sample if reference_info(p)["nodes_total"] > reference_info(p)["nodes"]]
    assert len(with_subgraphs) >= 5


def test_text_output_lists_everything(capsys) -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    assert cli_main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # the header names the real file (the corpus may sit behind a symlink)
    assert lines[0].startswith(str(path.resolve())) and "ir 8" in lines[0] and "ai.onnx=15" in lines[0]
    assert "121 nodes (350 with subgraphs)" in lines[1]
    assert "inputs (3)" in lines and "outputs (2)" in lines
    assert any(ln.split()[:3] == ["state", "float32", "[2,"] for ln in lines)
    ops = lines.index(next(ln for ln in lines if ln.startswith("ops (")))
    counts = [int(ln.split()[0]) for ln in lines[ops + 1 : ops + 16]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 160  # Constant, the most frequent
    assert any(ln.startswith("weights by dtype") for ln in lines)
    assert any(ln.startswith("subgraphs (24)") for ln in lines)
    assert max(len(ln) for ln in lines) <= 120


def test_info_text_mode_file(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text(FUNCTION_MODEL)
    j = _info_json(path, capsys)
    assert j["format"] == "text" and j["op_types"] == {"custom.Double": 2}


def test_info_subprocess_json_is_the_same(capsys) -> None:
    path = CORPUS / "real" / "asr_prep_kaldi.onnx"
    proc = run_cli("info", "--json", str(path))
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout) == _info_json(path, capsys)



def test_data_dir_option(tmp_path: Path, capsys) -> None:
    data, models = tmp_path / "data", tmp_path / "models"
    data.mkdir()
    models.mkdir()
    made = external_model(data, {"a": np.arange(10, dtype=np.float32)}, data="w.bin")
    made.rename(models / "m.onnx")
    proc = run_cli("info", str(models / "m.onnx"))
    assert proc.returncode == 2 and "w.bin" in proc.stderr and proc.stderr.count("\n") == 1
    j = _info_json_args(["info", str(models / "m.onnx"), "--json", "--data-dir", str(data)], capsys)
    assert j["external_data_files"] == [{"path": "w.bin", "bytes": 40, "tensors": 1, "referenced_bytes": 40}]
    assert cli_main(["info", str(models / "m.onnx"), "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "external data (1 file)" in out and "40 B" in out


def _info_json_args(args: list[str], capsys) -> dict:
    assert cli_main(args) == 0
    return json.loads(capsys.readouterr().out)
