"""Name repair finds a non-UTF-8 string in every kind of string field, wherever it sits.

``repair_names`` first asks a quick "is there any?" (flat loops over nodes, metadata and
shapes, the generic walk elsewhere) and walks the model only when there is (issue 30: the
walk cost more than parsing an 11.8k-node export). A miss would hand bytes to every view,
so each string field of a model that uses them all is broken in turn, on the wire."""

from __future__ import annotations

import itertools
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.io.names import repair_names

_counter = itertools.count()


def tok() -> str:
    """A unique placeholder: 'Zq' + 6 digits (a value name may sit in several fields)."""
    return f"Zq{next(_counter):06d}"


def _model() -> onnx.ModelProto:
    t = {k: tok() for k in ("x", "y", "h", "w", "c", "dim", "den", "tden", "elem")}
    body = helper.make_graph([helper.make_node("Identity", [t["h"]], [tok()], name=tok())], tok(), [],
                             [helper.make_tensor_value_info(tok(), TensorProto.FLOAT, [1])])
    body.output[0].name = body.node[0].output[0]
    relu = helper.make_node("Relu", [t["x"]], [t["h"]], name=tok(), domain="", doc_string=tok())
    helper.set_metadata_props(relu, {tok(): tok()})
    cond = helper.make_node("If", [tok()], [tok()], name=tok(), then_branch=body, else_branch=body)
    attr = helper.make_node("Cast", [t["h"]], [t["y"]], name=tok(), to=TensorProto.FLOAT)
    attr.attribute[0].doc_string = tok()
    w = numpy_helper.from_array(np.zeros(2, np.float32), tok())
    w.doc_string = tok()
    vi = helper.make_tensor_value_info(t["h"], TensorProto.FLOAT, [t["dim"], 2])
    vi.type.tensor_type.shape.dim[1].denotation = t["den"]
    vi.type.denotation = t["tden"]
    vi.doc_string = tok()
    helper.set_metadata_props(vi, {tok(): tok()})
    seq = helper.make_tensor_sequence_value_info(tok(), TensorProto.FLOAT, [tok()])
    graph = helper.make_graph([relu, cond, attr], tok(), [helper.make_tensor_value_info(t["x"], TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(t["y"], TensorProto.FLOAT, [1])], initializer=[w],
                              value_info=[vi, seq], doc_string=tok())
    fn = helper.make_function(tok(), tok(), [tok()], [tok()], [helper.make_node("Abs", [tok()], [tok()], name=tok())],
                              [helper.make_opsetid("", 17)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(fn.domain, 1)],
                              functions=[fn], producer_name=tok(), doc_string=tok())
    helper.set_model_props(model, {tok(): tok()})
    return model


MODEL = _model()
DATA = MODEL.SerializeToString()
TOKENS = sorted(set(re.findall(rb"Zq\d{6}", DATA)))


def test_the_model_uses_many_string_fields():
    assert len(TOKENS) >= 35, f"the model uses every kind of string field: {len(TOKENS)} tokens"
    assert repair_names(onnx.load_from_string(DATA)) == [], "nothing to repair in a clean model"


@pytest.mark.parametrize("token", TOKENS, ids=lambda t: t.decode())
def test_a_bad_byte_in_any_string_field_is_repaired(token: bytes):
    bad = token[:2] + b"\xff" + token[3:]
    model = onnx.ModelProto()
    model.ParseFromString(DATA.replace(token, bad))  # every field that holds this name
    found = repair_names(model)
    assert [r.raw for r in found] == [bad] * DATA.count(token), (
        f"the bad byte in {token!r} ({DATA.count(token)} fields) was {'missed' if not found else 'misread'}: "
        f"{[r.raw for r in found]}")
    assert {r.text for r in found} == {token[:2].decode() + "\ufffd" + token[3:].decode()}
