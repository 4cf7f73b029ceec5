"""A run tells the truth about its result: output shapes that contradict the declared ones
are said next to the result, and onnxruntime's own warnings are passed on, not swallowed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from editor.runtime.ort_log import parse_warnings
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "widgets", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)


def _with_dims(src: Path, out: Path, dims: dict[str, list]) -> Path:
    """``src`` with the given declared shapes (written directly: the point is a model whose
    declarations are wrong)."""
    m = onnx.load(str(src))
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.name in dims:
            shape = vi.type.tensor_type.shape
            del shape.dim[:]
            for d in dims[vi.name]:
                dim = shape.dim.add()
                if isinstance(d, str):
                    dim.dim_param = d
                else:
                    dim.dim_value = d
    onnx.save(m, out)
    return out


@pytest.mark.timeout(180)
def test_a_batch_the_model_ignores_is_said_next_to_the_result(tmp_path: Path) -> None:
    """faster-whisper's Silero VAD with its batch made dynamic: fed batch=3, its LSTM state
    outputs stay [1, 1, 128] against a declared [batch, 1, 128]."""
    src = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    m = onnx.load(str(src))
    dims = {vi.name: ["batch", *[d.dim_value or d.dim_param for d in vi.type.tensor_type.shape.dim][1:]]
            for vi in list(m.graph.input) + list(m.graph.output) if vi.type.tensor_type.shape.dim}
    path = _with_dims(src, tmp_path / "dynamic.onnx", dims)
    r = cli("run", path, "--random", "--dim", "batch=3", "--json")
    assert r.returncode == 0, r.stderr
    notes = json.loads(r.stdout)["shape_notes"]
    assert set(notes) == {"hn", "cn"} and all("'batch' is 3" in n for n in notes.values())
    r = cli("run", path, "--random", "--dim", "batch=3")
    line = next(ln for ln in r.stdout.splitlines() if "shape contradicts" in ln)
    assert "[batch,1,128]" in line and "[1,1,128]" in line


@pytest.mark.timeout(180)
def test_onnxruntime_warnings_are_passed_on(tmp_path: Path) -> None:
    """SqueezeNet with its output declared [1, 999, 1, 1]: onnxruntime runs it, warns that the
    declared shape does not merge with its own, and the run says both."""
    src = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
    out_name = onnx.load(str(src)).graph.output[0].name
    path = _with_dims(src, tmp_path / "wrong.onnx", {out_name: [1, 999, 1, 1]})
    r = cli("run", path, "--random", "--backend", "ort", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert any(out_name in w and "999" in w for w in data["warnings"]), data["warnings"]
    assert "dim 1 is declared 999" in data["shape_notes"][out_name]
    assert "onnxruntime:" not in r.stderr  # caught in the worker, not sprayed on the terminal
    r = cli("run", path, "--random", "--backend", "ort")
    assert any(ln.startswith("onnxruntime warning:") for ln in r.stdout.splitlines())


def test_log_records_parse() -> None:
    text = ("\x1b[0;93m2026-01-01 10:00:00.1 [W:onnxruntime:, graph.cc:128 MergeShapeInfo] Error merging\n"
            "shape info for output 'y'\x1b[m\n"
            "\x1b[1;31m2026-01-01 10:00:00.2 [E:onnxruntime:, x.cc:1 F] an error\x1b[m\n"
            "2026-01-01 10:00:00.3 [W:onnxruntime:, x.cc:2 G] plain\n")
    assert parse_warnings(text) == ["Error merging shape info for output 'y'", "plain"]
