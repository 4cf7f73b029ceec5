"""A model serialized in pieces is byte for byte the model serialized at once."""

from __future__ import annotations

import random

import onnx
import pytest

from editor.io.wire_parts import serialized_parts
from tests.conftest import CORPUS


def _sample() -> list:
    real = sorted((CORPUS / "real").glob("*.onnx"))
    backend = sorted((CORPUS / "onnx-backend").rglob("model.onnx"))
    return real + random.Random(7).sample(backend, min(40, len(backend)))


@pytest.mark.parametrize("path", _sample(), ids=lambda p: p.parent.name if p.name == "model.onnx" else p.stem)
def test_pieces_join_to_the_whole(path) -> None:
    model = onnx.load(str(path), load_external_data=False)
    whole = model.SerializeToString()
    joined = b"".join(serialized_parts(model))
    assert joined == whole, f"{path.name}: {len(joined)} bytes in pieces vs {len(whole)} at once"


def test_unknown_fields_survive() -> None:
    model = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], []))
    data = model.SerializeToString() + bytes([0xF8, 0x7F, 1])  # field 2047, a newer writer's
    parsed = onnx.ModelProto()
    parsed.ParseFromString(data)
    assert b"".join(serialized_parts(parsed)) == parsed.SerializeToString()


def test_the_graph_is_cut_per_node_and_weight() -> None:
    path = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    model = onnx.load(str(path), load_external_data=False)
    pieces = [p for p in serialized_parts(model) if p]
    n = len(model.graph.node) + len(model.graph.initializer)
    assert len(pieces) >= n, f"{len(pieces)} pieces for {n} nodes and initializers"
    assert max(map(len, pieces)) < len(model.SerializeToString()) / 2


def _big_weight_model(**extra) -> onnx.ModelProto:
    import numpy as np

    weight = onnx.numpy_helper.from_array(np.arange(1 << 20, dtype=np.float32), "w")
    for name, value in extra.items():
        setattr(weight, name, value)
    weight.metadata_props.add(key="k", value="fields after raw_data come after its bytes")
    node = onnx.helper.make_node("Identity", ["w"], ["y"], name="n")
    graph = onnx.helper.make_graph([node], "g", [], [onnx.helper.make_tensor_value_info("y", 1, [1 << 20])],
                                   initializer=[weight])
    return onnx.helper.make_model(graph)


@pytest.mark.parametrize("extra", [{}, {"doc_string": "after raw_data too"}, {"data_location": onnx.TensorProto.DEFAULT}])
def test_a_large_weight_is_its_raw_bytes_alone(extra) -> None:
    """A big weight's bytes are one piece of their own (copied once, not serialized whole),
    and the pieces still join to the whole model."""
    model = _big_weight_model(**extra)
    raw = model.graph.initializer[0].raw_data
    pieces = list(serialized_parts(model))
    assert b"".join(pieces) == model.SerializeToString()
    assert raw in pieces
    assert max(len(p) for p in pieces if p != raw) < 1000
