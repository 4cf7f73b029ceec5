"""Our errors are onnx's (or onnxruntime's) errors: no false alarms, no silent misses.

* ``check --full`` reports an *error* only where ``onnx.checker.check_model(full_check=True)``
  rejects the model or onnxruntime refuses to load it (warnings may be stricter).
* The live checks catch, by themselves, kinds of errors the full checker catches: axis
  attributes out of range for the input's rank, declared dims that are not valid sizes.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from editor.cli import main as cli_main
from editor.document import Document
from editor.validation import Validator, full_check
from tests.conftest import CORPUS, corpus_models


def _load(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path), load_external_data=False)


def _checker_accepts(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception:  # noqa: BLE001 - any rejection
        return False
    return True


def _onnxruntime_loads(model: onnx.ModelProto) -> bool:
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


def test_resampler_full_check_is_not_a_false_alarm() -> None:
    """A sinc resampler (Add broadcasting [160, 1] + [475] over computed values): onnx's data
    propagation fails on it, onnx.checker (full) passes and onnxruntime runs it."""
    path = CORPUS / "real" / "asr_prep_resample_44_16.onnx"
    model = _load(path)
    assert _checker_accepts(model) and _onnxruntime_loads(model)
    assert [p for p in full_check(model, Document(model)) if p.is_error] == []
    assert cli_main(["check", "--full", str(path)]) == 0


@pytest.mark.timeout(300)
def test_full_check_errors_only_where_onnx_or_onnxruntime_fails(corpus_dir: Path) -> None:
    """Over every corpus model: an error from the live checks or the full check means the
    checker rejects the model or onnxruntime will not load it."""
    false_alarms = []
    for path in corpus_models():
        model = _load(path)
        doc = Document(model)
        errors = [p for p in Validator(doc, live=False).validate_all() + full_check(model, doc) if p.is_error]
        if not errors or not _checker_accepts(model):
            continue
        if _onnxruntime_loads(model):
            false_alarms.append(f"{path.relative_to(corpus_dir)}: {errors[0].code}: {errors[0].message}")
    assert false_alarms == [], "\n".join(false_alarms[:20])
