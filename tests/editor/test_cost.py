"""The cost model: hand-computed cases per op, symbolic dims, control flow, and an
independent count on real models (onnx's own shape inference with the dims fixed)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from editor.cost import model_cost
from editor.shapes import evaluate, infer_model, to_text
from tests.conftest import CORPUS, ROOT

REAL = sorted((CORPUS / "real").glob("*.onnx")) + sorted((CORPUS / "onnx-backend" / "light").glob("*.onnx"))


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def _w(name, shape, dtype=np.float32):
    return numpy_helper.from_array(np.ones(shape, dtype), name)


def _node(cost, op):
    return next(n for n in cost.nodes if n.op_type == op)


def test_conv_macs_exclude_bias_and_respect_groups_stride_padding() -> None:
    # x [1, 8, 32, 32], 16 filters of 4x3x3 (group 2), stride 2, pad 1 -> [1, 16, 16, 16]
    m = _model([h.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 2], pads=[1, 1, 1, 1])],
               [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 32, 32])],
               [h.make_tensor_value_info("y", T.FLOAT, None)], [_w("w", [16, 4, 3, 3]), _w("b", [16])])
    c = model_cost(m)
    conv = _node(c, "Conv")
    assert conv.macs == (1 * 16 * 16 * 16) * (4 * 3 * 3)
    assert conv.params == 16 * 4 * 9 + 16 and conv.weight_bytes == 4 * (16 * 4 * 9 + 16)
    assert conv.output_bytes == 4 * 16 * 16 * 16
    assert c.to_json()["total"]["flops"] == 2 * conv.macs


def test_conv_transpose_matmul_gemm_pool_softmax_by_hand() -> None:
    nodes = [
        h.make_node("ConvTranspose", ["x", "wt"], ["ct"], strides=[2, 2]),           # [1,4,8,8] -> [1,6,17,17]
        h.make_node("MaxPool", ["ct"], ["p"], kernel_shape=[3, 3]),                # -> [1,6,15,15]
        h.make_node("Flatten", ["p"], ["f"]),                                      # -> [1, 1350]
        h.make_node("Gemm", ["f", "g"], ["gm"], transB=1),                         # [1,1350]x[1350,10]^T
        h.make_node("Softmax", ["gm"], ["s"]),
        h.make_node("MatMul", ["a", "bm"], ["mm"]),                                 # [2,5,7]x[7,3]
    ]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8]),
                       h.make_tensor_value_info("a", T.FLOAT, [2, 5, 7])],
               [h.make_tensor_value_info("s", T.FLOAT, None), h.make_tensor_value_info("mm", T.FLOAT, None)],
               [_w("wt", [4, 6, 3, 3]), _w("g", [10, 1350]), _w("bm", [7, 3])])
    c = model_cost(m)
    assert _node(c, "ConvTranspose").macs == (1 * 4 * 8 * 8) * 6 * 9
    assert _node(c, "MaxPool").macs == (6 * 15 * 15) * 9
    assert _node(c, "Gemm").macs == 10 * 1350
    assert _node(c, "Softmax").macs == 3 * 10
    assert _node(c, "MatMul").macs == 2 * 5 * 3 * 7
    assert _node(c, "Flatten").macs == 0


def test_lstm_attention_and_quantized_ops_by_hand() -> None:
    seq, batch, inp, hid = 5, 2, 3, 4
    lstm = _model([h.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=hid)],
                  [h.make_tensor_value_info("x", T.FLOAT, [seq, batch, inp])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)],
                  [_w("W", [1, 4 * hid, inp]), _w("R", [1, 4 * hid, hid])])
    assert _node(model_cost(lstm), "LSTM").macs == seq * batch * 4 * hid * (inp + hid)

    attn = _model([h.make_node("Attention", ["q", "k", "v"], ["o"])],
                  [h.make_tensor_value_info(n, T.FLOAT, [2, 3, 10, 8]) for n in "qkv"],
                  [h.make_tensor_value_info("o", T.FLOAT, None)], opset=23)
    assert _node(model_cost(attn), "Attention").macs == 2 * 3 * 10 * 10 * (8 + 8)

    # int8 weight -> DequantizeLinear -> MatMul: the chain is folded, the MatMul owns the int8 bytes
    q = numpy_helper.from_array(np.ones((64, 32), np.int8), "wq")
    scale = numpy_helper.from_array(np.array(0.1, np.float32), "s")
    m = _model([h.make_node("DequantizeLinear", ["wq", "s"], ["wf"]), h.make_node("MatMul", ["x", "wf"], ["y"])],
               [h.make_tensor_value_info("x", T.FLOAT, ["n", 64])], [h.make_tensor_value_info("y", T.FLOAT, None)],
               [q, scale])
    c = model_cost(m)
    dq, mm = _node(c, "DequantizeLinear"), _node(c, "MatMul")
    assert dq.folded and dq.macs == 0 and dq.params == 0
    assert mm.params == 64 * 32 + 1 and mm.weight_bytes == 64 * 32 + 4
    assert c.weight_bytes_by_type == {"int8": 64 * 32, "float": 4}
    assert to_text(mm.macs) == "2048*n"


def test_symbolic_conv_chain_evaluates_like_fixed_dims() -> None:
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r"]),
             h.make_node("Conv", ["r", "w2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1])]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, "height", "width"])]
    inits = [_w("w1", [8, 3, 3, 3]), _w("w2", [16, 8, 3, 3])]
    m = _model(nodes, inputs, [h.make_tensor_value_info("c2", T.FLOAT, None)], inits)
    sym = model_cost(m)
    assert set(sym.free_dims) == {"batch", "height", "width"}
    assert not isinstance(sym.macs, int)
    for b, hh, ww in [(1, 224, 224), (3, 97, 31), (2, 1, 5)]:
        fixed = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [b, 3, hh, ww])],
                       [h.make_tensor_value_info("c2", T.FLOAT, None)], inits)
        expect = model_cost(fixed).macs
        assert isinstance(expect, int)
        assert evaluate(sym.macs, {"batch": b, "height": hh, "width": ww}) == expect
        assert model_cost(m, {"batch": b, "height": hh, "width": ww}).macs == expect


def test_data_dependent_size_is_unknown_with_a_reason_not_zero() -> None:
    m = _model([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Transpose", ["nz"], ["t"]),
                h.make_node("Cast", ["t"], ["f"], to=T.FLOAT), h.make_node("MatMul", ["f", "w"], ["y"])],
               [h.make_tensor_value_info("x", T.FLOAT, [4, 4])], [h.make_tensor_value_info("y", T.FLOAT, None)],
               [_w("w", [2, 8])])
    c = model_cost(m)
    mm = _node(c, "MatMul")
    assert mm.macs is None and "unknown" in mm.unknown
    assert c.unknown_nodes >= 1 and c.to_json()["nodes"][-1]["macs"] is None


def test_if_reports_both_branches_and_costs_the_larger_loop_multiplies_its_trips() -> None:
    def branch(name, k):
        return h.make_graph([h.make_node("MatMul", ["x", f"w{k}"], [f"o{k}"])], name, [],
                            [h.make_tensor_value_info(f"o{k}", T.FLOAT, None)])
    if_node = h.make_node("If", ["c"], ["y"], then_branch=branch("then", 1), else_branch=branch("else", 2))
    m = _model([if_node], [h.make_tensor_value_info("c", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, [4, 8])],
               [h.make_tensor_value_info("y", T.FLOAT, None)], [_w("w1", [8, 2]), _w("w2", [8, 16])])
    node = _node(model_cost(m), "If")
    assert node.branches["then_branch"].macs == 4 * 2 * 8 and node.branches["else_branch"].macs == 4 * 16 * 8
    assert node.macs == 4 * 16 * 8

    body = h.make_graph([h.make_node("MatMul", ["v", "w"], ["v2"]), h.make_node("Identity", ["cond"], ["cond2"])],
                        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
                                 h.make_tensor_value_info("v", T.FLOAT, [3, 3])],
                        [h.make_tensor_value_info("cond2", T.BOOL, []), h.make_tensor_value_info("v2", T.FLOAT, [3, 3])])
    trips = numpy_helper.from_array(np.array(7, np.int64), "M")
    loop = _model([h.make_node("Loop", ["M", "", "v0"], ["vN"], body=body)],
                  [h.make_tensor_value_info("v0", T.FLOAT, [3, 3])], [h.make_tensor_value_info("vN", T.FLOAT, None)],
                  [trips, _w("w", [3, 3])])
    assert _node(model_cost(loop), "Loop").macs == 7 * 27


def test_shared_weight_counted_once() -> None:
    m = _model([h.make_node("MatMul", ["x", "w"], ["a"]), h.make_node("MatMul", ["a", "w"], ["b"])],
               [h.make_tensor_value_info("x", T.FLOAT, [2, 4])], [h.make_tensor_value_info("b", T.FLOAT, None)],
               [_w("w", [4, 4])])
    c = model_cost(m)
    assert c.params == 16 and [n.params for n in c.nodes] == [16, 0]


def test_peak_activation_memory_follows_liveness() -> None:
    # x -> a -> b, and x also read at the end: x, a, b all alive at the last node
    nodes = [h.make_node("Relu", ["x"], ["a"]), h.make_node("Relu", ["a"], ["b"]), h.make_node("Add", ["b", "x"], ["y"])]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [10])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    # step 2 (Add): x, b, y alive = 3 x 40 bytes; a died after step 1
    assert model_cost(m).peak_activation_bytes == 120


def _independent_macs(model: onnx.ModelProto) -> dict[str, int]:
    """Conv/ConvTranspose/MatMul/Gemm MACs from onnx's shape inference (dims fixed)."""
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim]
        if tt.HasField("shape") and dims and None not in dims:
            shapes[vi.name] = dims
    for t in inferred.graph.initializer:
        shapes[t.name] = list(t.dims)
    for n in inferred.graph.node:
        if n.op_type == "Constant":
            shapes[n.output[0]] = list(n.attribute[0].t.dims) if n.attribute[0].name == "value" else None
    out = {}
    for n in inferred.graph.node:
        try:
            y = shapes.get(n.output[0])
            if n.op_type in ("Conv", "ConvTranspose"):
                w = shapes[n.input[1]]
                base = np.prod(shapes[n.input[0]]) if n.op_type == "ConvTranspose" else np.prod(y)
                out[n.name] = int(base * np.prod(w[1:]))
            elif n.op_type in ("MatMul", "Gemm"):
                a = shapes[n.input[0]]
                trans = any(at.name == "transA" and at.i for at in n.attribute)
                out[n.name] = int(np.prod(y) * (a[0] if trans else a[-1]))
        except (TypeError, KeyError, IndexError):
            continue  # onnx left a shape unknown: not comparable
    return out


def _fix_inputs(model: onnx.ModelProto, value: int) -> tuple[onnx.ModelProto, dict[str, int]]:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    dims = {}
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param:
                dims[d.dim_param] = value
                d.Clear()
                d.dim_value = value
    return m, dims


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_macs_agree_with_an_independent_count_on_real_models(path) -> None:
    model = onnx.load(str(path))
    fixed, dims = _fix_inputs(model, 64)
    independent = _independent_macs(fixed)
    ours_fixed = {n.name: n.macs for n in model_cost(fixed).nodes}
    ours_symbolic = {n.name: evaluate(n.macs, dims) if n.macs is not None else None for n in model_cost(model).nodes}
    compared = 0
    for name, expect in independent.items():
        if name in ours_fixed and expect:
            compared += 1
            assert ours_fixed[name] == pytest.approx(expect, rel=0.01), name
            assert ours_symbolic[name] == pytest.approx(expect, rel=0.01), name
    assert compared == len([v for v in independent.values() if v])
    total = sum(independent.values())
    if total:
        ours = sum(ours_fixed[n] or 0 for n in independent if n in ours_fixed)
        assert ours == pytest.approx(total, rel=0.01)
    # parameters: every initializer any node reads, each once
    read = {i for n in model.graph.node for i in n.input}
    init = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.name in read)
    consts = sum(int(np.prod(n.attribute[0].t.dims)) for n in model.graph.node
                 if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value")
    if not consts:
        assert model_cost(model).params == init


def test_shape_engine_keeps_named_dims_through_a_real_detector() -> None:
    model = onnx.load(str(CORPUS / "real" / "ppocrv4_det.onnx"))
    table = infer_model(model)
    out = table.get(model.graph.output[0].name)
    assert out.dims is not None and out.dims[1] == 1
    for axis, name in ((2, "p2o.DynamicDimension.1"), (3, "p2o.DynamicDimension.2")):
        # the detector's map is the input size again after its down- and up-sampling
        for size in (64, 96, 320):
            assert evaluate(out.dims[axis], {name: size}) == size


def test_cli_info_cost_json_contract() -> None:
    path = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    r = subprocess.run([sys.executable, "-m", "widgets", "info", str(path), "--cost", "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    total = data["total"]
    assert {"macs", "params", "weight_bytes", "peak_activation_bytes"} <= total.keys()
    assert isinstance(total["macs"], str) and "seq_len" in total["macs"]  # symbolic, not refused
    assert len(data["nodes"]) == 25 and {"name", "op_type", "macs", "params", "weight_bytes", "output_bytes"} <= data[
        "nodes"][0].keys()
    r = subprocess.run([sys.executable, "-m", "widgets", "info", str(path), "--cost", "--json", "--dim", "seq_len=512"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and isinstance(json.loads(r.stdout)["total"]["macs"], int)
    r = subprocess.run([sys.executable, "-m", "widgets", "info", str(path), "--cost", "--dim", "nope=1"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode != 0 and r.stderr.startswith("error:") and "Traceback" not in r.stderr
