"""editor.diff.display (colours, counterparts, stops) and the matching of quantized and
folded models (editor.diff.canonical), on real models and their quantized variants."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from editor.commands import DeleteNodes, SetNodeField
from editor.diff import diff_models
from editor.diff.display import ADDED, CHANGED, REMOVED, REWRITTEN, SAME, display_of
from editor.diff.weight_stats import weight_details
from editor.document import Document
from tests.conftest import CORPUS
from tests.diff_support import CLS, planted
from tests.quantize_support import FORMATS, MAGIKA, quantize


def marked(status: dict[int, str]) -> dict[int, str]:
    return {nid: st for nid, st in status.items() if st != SAME}


def test_three_planted_edits_are_three_stops_marked_on_both_sides() -> None:
    a, b, edit = planted(CLS)
    disp = display_of(diff_models(a, b), a, b)
    # ids of a fresh load of the same file agree, so A's ids name the same nodes in B
    assert marked(disp.status_a) == {edit["conv"]: CHANGED, edit["victim"]: REMOVED, edit["renamed"]: CHANGED}, \
        disp.summary
    assert marked(disp.status_b) == {edit["conv"]: CHANGED, edit["renamed"]: CHANGED}, disp.summary
    kinds = [(s.kind, s.a[:1]) for s in disp.stops]
    order = sorted([edit["conv"], edit["victim"], edit["renamed"]], key=lambda n: list(a.main.node_ids).index(n))
    assert [k for k, _ in kinds] == [{edit["conv"]: CHANGED, edit["victim"]: REMOVED,
                                      edit["renamed"]: CHANGED}[n] for n in order], kinds
    assert [s.a[0] for s in disp.stops] == order, "stops walk A's topological order"
    by_kind = {s.kind: s for s in disp.stops}
    removal = by_kind[REMOVED]
    assert len(removal.b) == 1 and removal.b[0] in a.index.nodes, "the rewired consumer is the removal's context"
    assert any("rewired" in d.what for d in removal.details), removal.details
    attr = next(s for s in disp.stops if s.a[0] == edit["conv"])
    assert [(d.what, d.before, d.after) for d in attr.details] == [("attribute strides", "[1, 1]", "[2, 2]")]
    rename = next(s for s in disp.stops if s.a[0] == edit["renamed"])
    assert ("value renamed", edit["value"], edit["value"] + "_renamed") in \
        [(d.what, d.before, d.after) for d in rename.details]
    assert disp.counterparts("a", edit["conv"]) == (edit["conv"],)
    json.dumps(disp.to_dict())


@pytest.mark.timeout(180)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_onnxruntime_format_pairs_its_quantized_matmuls(quantized_magika, fmt: str) -> None:  # noqa: ANN001
    a, b = Document.open(MAGIKA), Document.open(quantized_magika[fmt])
    disp = display_of(diff_models(a, b), a, b)
    covered, total = disp.coverage()
    assert covered >= 0.9 * total, f"{fmt}: {covered} of {total} A nodes have a counterpart; {disp.summary[:4]}"
    matmuls = [n for n in a.main.node_ids if a.node(n).op_type == "MatMul"]
    assert matmuls
    for n in matmuls:
        assert disp.status_a[n] == REWRITTEN, f"{fmt}: MatMul {a.node(n).name} is {disp.status_a[n]}"
        partners = disp.counterparts("a", n)
        assert partners and all(disp.status_b[p] == REWRITTEN for p in partners), (fmt, partners)
        stop = disp.stops[disp.stop_of("a", n)]
        rows = {d.what: d for d in weight_details(a, b, stop)}
        diff_row = rows.get("largest element-wise difference")
        assert diff_row is not None, (fmt, [d.what for d in weight_details(a, b, stop)])
        worst = float(diff_row.after.rsplit("|Δ| ", 1)[1].rstrip(")"))
        assert 0 < worst < 0.2, f"{fmt}: a quantized weight read back within a step of its float: {diff_row}"
    assert not [st for st in disp.status_a.values() if st == REMOVED], disp.summary[:6]
    assert not [st for st in disp.status_b.values() if st == ADDED], disp.summary[:6]


def test_qoperator_the_other_way_round_reads_back_to_float(quantized_magika) -> None:  # noqa: ANN001
    a, b = Document.open(quantized_magika["qoperator"]), Document.open(MAGIKA)
    d = diff_models(a, b)
    assert any(rw.kind == "dequantized" and "QLinearMatMul" in rw.summary for rw in d.rewrites), d.summary_lines()
    assert not d.nodes_added and not [r for r in d.nodes_removed if r.op_type.startswith("QLinear")], \
        d.summary_lines()


# -- small made-up models for the folding rules ------------------------------------------------
def _conv_model(with_bn: bool, relu: bool = True) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    nodes = [helper.make_node("Conv", ["x", "w"] + ([] if with_bn else ["b"]), ["c"], name="conv", pads=[1, 1, 1, 1])]
    last = "c"
    if with_bn:
        for name, value in (("g", 1.5), ("beta", 0.1), ("mean", 0.2), ("var", 2.0)):
            inits.append(numpy_helper.from_array(np.full(4, value, np.float32), name))
        nodes.append(helper.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["bn"], name="bn"))
        last = "bn"
    else:
        scale = 1.5 / np.sqrt(2.0 + 1e-5)
        inits[0] = numpy_helper.from_array((w * scale).astype(np.float32), "w_folded")
        nodes[0].input[1] = "w_folded"
        inits.append(numpy_helper.from_array(np.full(4, 0.1 - 0.2 * scale, np.float32), "b"))
    if relu:
        nodes.append(helper.make_node("Relu", [last], ["r"], name="relu"))
        last = "r"
    nodes.append(helper.make_node("Conv", [last, "w2"], ["y"], name="conv2"))
    inits.append(numpy_helper.from_array(rng.standard_normal((2, 4, 1, 1)).astype(np.float32), "w2"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_batchnorm_folded_into_the_conv_is_one_fusion() -> None:
    d = diff_models(_conv_model(with_bn=True), _conv_model(with_bn=False))
    assert [rw.summary for rw in d.rewrites] == ["Conv+BatchNormalization fused into Conv"], d.summary_lines()
    assert not d.nodes_removed and not d.nodes_added, d.summary_lines()


def test_a_relu_deleted_after_a_conv_stays_a_removed_node() -> None:
    before = Document(_conv_model(with_bn=False))
    after = Document(_conv_model(with_bn=False))
    after.execute(DeleteNodes([next(n for n in after.main.node_ids if after.node(n).op_type == "Relu")],
                              reconnect=True))
    d = diff_models(before, after)
    assert [r.op_type for r in d.nodes_removed] == ["Relu"] and not d.rewrites, d.summary_lines()


def test_qoperator_relu_folded_into_qlinearconv(tmp_path) -> None:  # noqa: ANN001
    src = tmp_path / "conv.onnx"
    onnx.save(_conv_model(with_bn=False), src)
    out = quantize(src, "qoperator", tmp_path / "conv_qop.onnx")
    d = diff_models(onnx.load(src), onnx.load(out))
    assert "Conv+Relu quantized to int8 (QLinearConv)" in d.rewrite_counts(), d.summary_lines()
    assert not d.nodes_removed and not d.nodes_added, d.summary_lines()


def test_default_attribute_written_out_is_no_change() -> None:
    a = _conv_model(with_bn=False)
    b = onnx.ModelProto()
    b.CopyFrom(a)
    b.graph.node[0].attribute.append(helper.make_attribute("auto_pad", "NOTSET"))
    b.graph.node[0].attribute.append(helper.make_attribute("group", 1))
    assert diff_models(a, b).identical
    b.graph.node[0].attribute[-1].i = 2
    d = diff_models(a, b)
    assert [(x.name, x.old, x.new) for ch in d.nodes_changed for x in ch.attributes] == [("group", None, "2")]


def test_constant_weights_stored_as_initializers_are_not_removed() -> None:
    a = _conv_model(with_bn=False)
    b = onnx.ModelProto()
    b.CopyFrom(a)
    w = next(t for t in b.graph.initializer if t.name == "w2")
    b.graph.node.insert(0, helper.make_node("Constant", [], ["w2"], name="const_w2", value=w))
    b.graph.initializer.remove(w)
    d = diff_models(a, b)
    assert [r.name for r in d.weight_nodes] == ["const_w2"], d.summary_lines()
    assert not d.nodes_added and not d.nodes_changed, d.summary_lines()
    disp = display_of(d, Document(a), Document(b))
    assert disp.coverage()[0] == disp.coverage()[1]


def test_changed_weights_mark_their_reader_with_statistics() -> None:
    a = _conv_model(with_bn=False)
    b = onnx.ModelProto()
    b.CopyFrom(a)
    t = next(t for t in b.graph.initializer if t.name == "w2")
    w = numpy_helper.to_array(t).copy()
    w[1, 2, 0, 0] += 0.5
    t.CopyFrom(numpy_helper.from_array(w, "w2"))
    da, db = Document(a), Document(b)
    disp = display_of(diff_models(da, db), da, db)
    (stop,) = disp.stops
    conv2 = next(n for n in da.main.node_ids if da.node(n).name == "conv2")
    assert stop.a == (conv2,) and disp.status_a[conv2] == CHANGED
    rows = {d.what: d for d in weight_details(da, db, stop)}
    assert rows["largest element-wise difference"].before.endswith("at [1, 2, 0, 0]"), rows
    assert "|Δ| 0.5" in rows["largest element-wise difference"].after, rows


def test_body_edits_are_stops_inside_their_owner() -> None:
    path = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    a, b = Document.open(path), Document.open(path)
    owner = next(n for n in b.main.node_ids if b.index.children.get(n))
    body = b.index.children[owner][0]
    inner = next(n for n in b.scope(body).node_ids if b.node(n).op_type not in ("Constant",))
    b.execute(SetNodeField(inner, "name", "renamed_in_body"))
    disp = display_of(diff_models(a, b), a, b)
    assert disp.status_a[inner] == CHANGED and disp.status_b[inner] == CHANGED
    assert disp.status_a[owner] == CHANGED, "the owner of a changed body is changed"
    ranks = [s.a[0] for s in disp.stops if s.a]
    assert ranks.index(owner) < ranks.index(inner), "a body's change comes right after its owner"


def test_fp16_conversion_reads_as_weights_stored_as_float16() -> None:
    from editor.surgery.precision import convert_precision

    a = onnx.load(CLS)
    b = convert_precision(a, keep_io_types=True).model
    da, db = Document(a), Document(b)
    disp = display_of(diff_models(da, db), da, db)
    covered, total = disp.coverage()
    assert covered == total, (covered, total)
    changed = [s.title for s in disp.stops if s.kind == CHANGED and not s.title.startswith("model:")]
    assert not changed, f"a converted weight is rewritten, not changed: {changed[:5]}"
    converted = [s for s in disp.stops if s.title.startswith("weights stored as float16")]
    assert converted and all(s.kind == REWRITTEN for s in converted)
    conv = next(s for s in converted if "(Conv)" in s.title)
    rows = {d.what: d for d in weight_details(da, db, conv)}
    diff_row = rows["largest element-wise difference"]
    assert float(diff_row.after.rsplit("|Δ| ", 1)[1].rstrip(")")) < 1e-2, diff_row
