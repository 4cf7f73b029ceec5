"""The shape engine never states a wrong shape: every value whose shape it states (with the
dims fixed) has exactly that shape in a real run with all intermediates, on real models."""

from __future__ import annotations

import onnx
import pytest

from editor.runtime import Runner
from editor.runtime.inputs import make_inputs
from editor.runtime.intermediates import value_scopes
from editor.runtime.source import ModelSource
from editor.shapes import evaluate, infer_model
from tests.conftest import CORPUS

# dims at which each model runs on random inputs (audio models need a long enough signal)
MODELS = {
    "asr_prep_kaldi.onnx": {"batch_size": 1, "N": 1600},
    "asr_prep_nemo128.onnx": {"batch_size": 2, "N": 1000},
    "asr_prep_resample_44_16.onnx": {"batch_size": 1, "N": 4410},
    "fw_silero_vad_v6.onnx": {"seq_len": 3},
    "magika_standard_v3_3.onnx": {"unk__214": 2},
    "ppocr_mobile_v2_cls.onnx": {},
    "ppocrv4_det.onnx": {"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 96, "p2o.DynamicDimension.2": 64},
    "silero_vad_16k_op15.onnx": {"batch": 1, "sequence": 512},
    "silero_vad_half.onnx": {"batch": 1, "sequence": 512},
}


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_stated_shape_is_the_shape_a_run_produces(runner, name) -> None:
    path = CORPUS / "real" / name
    dims = MODELS[name]
    model = onnx.load(str(path))
    table = infer_model(model, dims)
    scopes = value_scopes(model)
    outputs = list(dict.fromkeys(scopes.main + scopes.outputs))
    feeds = make_inputs(model, "random", dims=dims, seed=0)
    result = runner.run(ModelSource.from_path(path), feeds, outputs=outputs, timeout=120)
    assert result.ok, result.error
    stated, wrong = 0, []
    for value in outputs:
        vs = table.get(value)
        if vs.dims is None or value not in result.outputs:
            continue
        shape = [evaluate(d, dims) if d is not None else None for d in vs.dims]
        observed = getattr(result.value(value), "shape", None)
        if None in shape or observed is None:
            continue
        stated += 1
        if list(observed) != shape:
            wrong.append(f"{value}: stated {shape}, ran {list(observed)}")
    assert not wrong, "\n".join(wrong[:10])
    assert stated >= 0.5 * len(outputs)  # and it states most of them
