"""The ONNX text syntax: detection, round trips on corpus models, clear syntax errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from editor.errors import LoadError
from editor.io import (
    SaveOptions,
    load_model,
    load_model_from_bytes,
    parse_model_text,
    save_model,
    serialize_model_text,
    tensor_to_numpy,
)
from tests.conftest import CORPUS, corpus_models
from tests.editor.test_io_support import make_model, weights, write_external

TEXT = """<
   ir_version: 8,
   opset_import: ["" : 18]
>
g (float[N] x) => (float[N] y) {
   y = Relu (x)
}
"""


def _signature(model: onnx.ModelProto) -> tuple:
    """What a text round trip keeps: graph structure, names, types of I/O, initializer values."""

    def graph(g: onnx.GraphProto) -> tuple:
        nodes = []
        for n in g.node:
            attrs = []
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    attrs.append((a.name, graph(a.g)))
                elif a.type == onnx.AttributeProto.TENSOR:
                    attrs.append((a.name, tensor_to_numpy(a.t).tobytes()))
                else:
                    attrs.append((a.name, onnx.helper.get_attribute_value(a).__repr__()))
            nodes.append((n.op_type, n.domain, tuple(n.input), tuple(n.output), tuple(attrs)))
        inits = tuple((t.name, t.data_type, tuple(t.dims), tensor_to_numpy(t).tobytes()) for t in g.initializer)
        io = tuple((v.name, v.type.SerializeToString()) for v in (*g.input, *g.output))
        return tuple(nodes), inits, io

    return graph(model.graph), tuple((o.domain, o.version) for o in model.opset_import), model.ir_version


# A spread of the corpus: control flow, sequences, ML ops, training, functions, real models.
SAMPLE = [p for p in corpus_models() if p.parent.name in {
    "test_if", "test_loop11", "test_scan9_sum", "test_sequence_map_add_2_sequences", "test_ai_onnx_ml_tree_ensemble_set_membership",
    "test_training_dropout", "test_gelu_tanh_1", "test_layer_normalization_2d_axis0", "test_cast_FLOAT_to_FLOAT8E4M3FN",
    "test_dequantizelinear_int4", "test_range_float_type_positive_delta_expanded", "test_constant",
}] + [CORPUS / "real" / "asr_prep_kaldi.onnx", CORPUS / "real" / "silero_vad_16k_op15.onnx",
      CORPUS / "real" / "ort_logreg_iris.onnx"]


def test_sample_exists() -> None:
    assert len(SAMPLE) >= 14


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.parent.name if p.name == "model.onnx" else p.stem)
def test_text_round_trip(path: Path, tmp_path: Path) -> None:
    model = load_model(path).model
    out = tmp_path / "model.onnxtxt"
    save_model(model, out)  # text by extension
    assert out.read_text(encoding="utf-8").lstrip().startswith("<")
    loaded = load_model(out)
    assert loaded.format == "text"
    assert _signature(loaded.model) == _signature(model)
    # text -> binary -> text is a fixed point
    again = tmp_path / "again.onnx"
    save_model(loaded.model, again)
    assert serialize_model_text(load_model(again).model) == serialize_model_text(loaded.model)


def test_text_detected_by_content(tmp_path: Path) -> None:
    p = tmp_path / "actually_text.onnx"
    p.write_text("# a comment first\n" + TEXT, encoding="utf-8")
    loaded = load_model(p)
    assert loaded.format == "text"
    assert [n.op_type for n in loaded.model.graph.node] == ["Relu"]
    assert load_model_from_bytes(TEXT.encode()).format == "text"


def test_txt_extension_and_format_option(tmp_path: Path) -> None:
    p = tmp_path / "m.txt"
    p.write_text(TEXT, encoding="utf-8")
    m = load_model(p).model
    binary_named_txt = tmp_path / "binary.txt"
    save_model(m, binary_named_txt, options=SaveOptions(format="binary"))
    assert onnx.ModelProto.FromString(binary_named_txt.read_bytes()) == m
    text_named_onnx = tmp_path / "text.onnx"
    save_model(m, text_named_onnx, options=SaveOptions(format="text"))
    assert load_model(text_named_onnx).format == "text"


def test_syntax_error_is_a_clear_load_error(tmp_path: Path) -> None:
    p = tmp_path / "broken.onnxtxt"
    p.write_text(TEXT.replace("y = Relu (x)", "y = Relu (x"), encoding="utf-8")
    with pytest.raises(LoadError) as info:
        load_model(p)
    message = str(info.value)
    assert "\n" not in message
    assert "broken.onnxtxt" in message and "line 7" in message, message
    with pytest.raises(LoadError, match="text syntax error"):
        parse_model_text("hello")


def test_binary_garbage_with_text_extension(tmp_path: Path) -> None:
    p = tmp_path / "x.onnxtxt"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(LoadError, match="not UTF-8"):
        load_model(p)


def test_binary_content_with_text_extension(tmp_path: Path) -> None:
    p = tmp_path / "renamed.txt"
    m = make_model()
    p.write_bytes(m.SerializeToString())
    loaded = load_model(p)
    assert loaded.format == "binary" and loaded.model == m


def test_text_save_inlines_external_data(tmp_path: Path) -> None:
    path = write_external(make_model(), tmp_path / "m.onnx")
    loaded = load_model(path)
    out = tmp_path / "m.onnxtxt"
    save_model(loaded.model, out, store=loaded.store)
    back = load_model(out)
    for t in back.model.graph.initializer:
        np.testing.assert_array_equal(tensor_to_numpy(t), weights()[t.name])
