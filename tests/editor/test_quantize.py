"""Quantize (editor.quantize, ``onnx-studio quantize``): calibration data in every form users
have, onnxruntime's three tools behind one request, the proof, the sensitivity ranking and
``--auto`` on a planted outlier.

Cheap by design: a 10-node CNN + MLP (tests/quantize_support.tiny_net) and a handful of
calibration sets; the quantizer session and the runner are shared per module.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from editor.cli import main as cli_main
from editor.errors import CommandError
from editor.quantize import (
    ImageParams,
    QuantizeCancelled,
    QuantizeOptions,
    Quantizer,
    Reference,
    checker_refusal,
    feeds_calibration,
    image_calibration,
    make_proof,
    npz_calibration,
    quantized_nodes,
    random_calibration,
    resolve_image,
)
from editor.quantize.auto import auto_quantize, cheapest_first, search_order
from editor.quantize.sensitivity import NodeSensitivity, Sensitivity, measure_sensitivity
from editor.runtime import Runner
from editor.runtime.inputs import save_inputs
from tests.quantize_support import tiny_net


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


@pytest.fixture(scope="module")
def net():
    return tiny_net()


@pytest.fixture(scope="module")
def calibration(net):
    return random_calibration(net, 4, held_back=2)


@pytest.fixture(scope="module")
def quantizer(net, calibration):
    with Quantizer(net, calibration) as q:
        yield q


def _ops(model: onnx.ModelProto) -> set[str]:
    return {n.op_type for n in model.graph.node}


# -- options and calibration data --------------------------------------------------------------


def test_options_refuse_what_onnxruntime_cannot_do() -> None:
    for bad, words in ((dict(mode="int3"), "unknown mode"), (dict(mode="int4", block_size=24), "power of two"),
                       (dict(method="kl"), "calibration method"), (dict(percentile=0.0), "percentile"),
                       (dict(mode="dynamic", weight_type="int16"), "dynamic")):
        with pytest.raises(CommandError) as err:
            QuantizeOptions(**bad).checked()
        assert words in err.value.message, f"{bad}: expected {words!r} in {err.value.message!r}"
    opts = QuantizeOptions().excluding(["a"], ["Conv"]).excluding(["a", "b"])
    assert (opts.exclude_nodes, opts.exclude_ops) == (("a", "b"), ("Conv",)), opts


def test_random_calibration_is_said_to_be_a_smoke_test(net, calibration) -> None:
    assert (len(calibration.sets), len(calibration.held_back), calibration.independent) == (4, 2, True)
    assert not np.array_equal(calibration.sets[0]["x"], calibration.held_back[0]["x"]), "held-back sets reuse a seed"
    text = "\n".join(calibration.lines())
    assert "WARNING" in text and "RANDOM" in text and "smoke test" in text, text


def test_npz_folders_hold_back_a_fifth_and_fill_missing_inputs(tmp_path, net) -> None:
    rng = np.random.default_rng(1)
    for k in range(5):
        save_inputs(tmp_path / f"set{k}.npz", {"x": rng.random((1, 3, 16, 16), dtype=np.float32)})
    (tmp_path / "run9").mkdir()
    save_inputs(tmp_path / "run9" / "inputs.npz", {"x": rng.random((1, 3, 16, 16), dtype=np.float32)})
    data = npz_calibration(net, tmp_path)
    assert (len(data.sets), len(data.held_back), data.independent) == (5, 1, True), data.source
    assert "6 .npz set(s)" in data.source, data.source
    few = npz_calibration(net, tmp_path / "set0.npz")
    assert few.independent is False and few.held_back == few.sets, "one set: measured on itself"
    assert any("flatters" in n for n in few.notes), few.notes
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="no .npz"):
        npz_calibration(net, tmp_path / "empty")
    two = onnx.ModelProto()
    two.CopyFrom(net)
    two.graph.input.append(onnx.helper.make_tensor_value_info("extra", onnx.TensorProto.FLOAT, [2]))
    data = feeds_calibration(two, [{"x": np.zeros((1, 3, 16, 16), np.float32)}], "given")
    assert "extra" in data.sets[0] and any("'extra'" not in n and "extra" in n for n in data.notes), data.notes


def test_pictures_are_resized_and_normalised_by_metadata_or_statement(tmp_path) -> None:
    from PIL import Image

    for k in range(5):
        Image.new("RGB", (40, 30), (255, 0, 51 * k)).save(tmp_path / f"p{k}.png")
    model = tiny_net()
    model.metadata_props.add(key="mean", value="[0.5, 0.5, 0.5]")
    model.metadata_props.add(key="std", value="0.5,0.5,0.5")
    image = resolve_image(model)
    assert (image.height, image.width, image.layout, image.scale) == (16, 16, "NCHW", pytest.approx(1 / 255))
    assert any("mean from the model's metadata" in h for h in image.how), image.how
    data = image_calibration(model, tmp_path, held_back=1)
    x = data.sets[0]["x"]
    assert x.shape == (1, 3, 16, 16) and x.dtype == np.float32, x.shape
    assert np.allclose(x[0, 0], 1.0) and np.allclose(x[0, 1], -1.0), "red 255 -> 1, green 0 -> -1"
    stated = resolve_image(model, ImageParams(mean=(0.0,), std=(1.0,), scale=1.0, bgr=True, size=(8, 12)))
    arr = stated.load(tmp_path / "p0.png")
    assert arr.shape == (1, 3, 8, 12) and np.allclose(arr[0, 2], 255.0) and np.allclose(arr[0, 0], 0.0), \
        "BGR: red lands in the last channel"
    bare = tiny_net()
    guessed = resolve_image(bare)
    assert any("a guess" in h for h in guessed.how) and guessed.scale == pytest.approx(1 / 255), guessed.how
    with pytest.raises(CommandError, match="channel"):
        resolve_image(bare, ImageParams(mean=(0.1, 0.2)))


# -- the quantizer -----------------------------------------------------------------------------


def test_static_qdq_quantizes_every_node_and_recalibrates_never(quantizer, net) -> None:
    q = quantizer.quantize(QuantizeOptions())
    assert {"QuantizeLinear", "DequantizeLinear"} <= _ops(q.model), _ops(q.model)
    assert q.quantized.get("conv1") == "int8" and q.quantized.get("fc2") == "int8", q.quantized
    assert "calibrate+quantize" in q.seconds or "quantize" in q.seconds, q.seconds
    again = quantizer.quantize(QuantizeOptions(exclude_nodes=("fc2",), exclude_ops=("Conv",)))
    assert "calibrate+quantize" not in again.seconds, f"the second call calibrated again: {again.seconds}"
    assert not {"fc2", "conv1", "conv2"} & set(again.quantized), again.quantized
    assert set(again.excluded) == {"fc2", "conv1", "conv2"}, again.excluded
    fc2 = next(n for n in again.model.graph.node if n.name == "fc2")
    assert list(fc2.input) == ["s", "F2"], f"a node kept in float reads float values: {list(fc2.input)}"
    with pytest.raises(CommandError, match="no node named 'nope'"):
        quantizer.quantize(QuantizeOptions(exclude_nodes=("nope",)))
    with pytest.raises(CommandError, match="op type 'Gemm'"):
        quantizer.quantize(QuantizeOptions(exclude_ops=("Gemm",)))


def test_a_float_node_after_a_conv_reads_its_int8_output_so_the_conv_stays_int8(quantizer) -> None:
    q = quantizer.quantize(QuantizeOptions(exclude_nodes=("relu2", "gap")))
    nodes = {n.name: n for n in q.model.graph.node}
    producer = {o: n for n in q.model.graph.node for o in n.output}
    # relu2 reads conv2's output: onnxruntime fuses conv2 only while its output goes to QuantizeLinear alone
    assert producer[nodes["relu2"].input[0]].op_type == "DequantizeLinear", list(nodes["relu2"].input)
    assert q.quantized.get("conv2") == "int8", f"conv2 should stay int8 beside a float Relu: {q.quantized}"
    # gap reads relu2's output, no Conv's: it reads the float value itself
    assert list(nodes["gap"].input) == ["r2"], list(nodes["gap"].input)


def test_qdq_names_what_the_quantizer_adds_shortly_and_shares_equal_scales(quantizer) -> None:
    import onnxruntime as ort

    long = quantizer.quantize(QuantizeOptions(short_names=False))
    short = quantizer.quantize(QuantizeOptions())
    g, prepared = short.model.graph, short.prepared.graph
    assert checker_refusal(short.model) is None, checker_refusal(short.model)
    # the user's names stay: every node and tensor of the float model the result still has
    names = {n.name for n in g.node}
    tensors = {x for n in g.node for x in (*n.input, *n.output)}
    assert {n.name for n in prepared.node} <= names, sorted({n.name for n in prepared.node} - names)
    long_tensors = {x for n in long.model.graph.node for x in (*n.input, *n.output)}
    float_tensors = {x for n in prepared.node for x in (*n.input, *n.output)}
    assert long_tensors & float_tensors == tensors & float_tensors, sorted((long_tensors ^ tensors) & float_tensors)
    suffixes = ("_quantized", "_scale", "_zero_point", "_QuantizeLinear", "_DequantizeLinear")
    left = sorted(x for x in tensors | names if x not in float_tensors and any(s in x for s in suffixes))
    assert not left, f"onnxruntime's long names left: {left[:5]}"
    scalars = [(t.data_type, t.raw_data, tuple(t.float_data), tuple(t.int32_data)) for t in g.initializer if not t.dims]
    assert len(scalars) == len(set(scalars)), "equal scalar scales / zero points should be one initializer"
    assert len(g.initializer) < len(long.model.graph.initializer), (len(g.initializer),
                                                                    len(long.model.graph.initializer))
    assert short.model.ByteSize() < 0.8 * long.model.ByteSize(), (short.model.ByteSize(), long.model.ByteSize())
    # the same computation: the same outputs, bit for bit, and the same nodes quantized the same way
    assert short.quantized == long.quantized, (short.quantized, long.quantized)
    feeds = quantizer.calibration.held_back[0]
    outs = [ort.InferenceSession(m.model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
            for m in (long, short)]
    assert all(np.array_equal(a, b) for a, b in zip(*outs)), "short names changed the outputs"


@pytest.mark.parametrize("options, ops, kind", [
    (QuantizeOptions(format="qoperator"), {"QLinearConv", "QLinearMatMul"}, "int8"),
    (QuantizeOptions(mode="dynamic"), {"MatMulInteger"}, "int8 dynamic"),
    (QuantizeOptions(mode="int4", block_size=32, symmetric=True), {"MatMulNBits"}, "int4 weights"),
])
def test_other_formats_and_modes(quantizer, options, ops, kind) -> None:
    q = quantizer.quantize(options)
    assert ops <= _ops(q.model), f"{options.describe()}: expected {ops} in {_ops(q.model)}"
    assert kind in set(q.quantized.values()), f"{options.describe()}: kinds {q.quantized}"
    assert quantized_nodes(q.prepared, q.model) == q.quantized


def test_the_result_keeps_only_the_value_info_the_model_declared_and_int16_is_read_without_it(quantizer,
                                                                                            net) -> None:
    declared = {vi.name for vi in net.graph.value_info}
    for options in (QuantizeOptions(), QuantizeOptions(activation_type="uint16")):
        q = quantizer.quantize(options)
        added = {vi.name for vi in q.model.graph.value_info} - declared
        assert not added, f"{options.describe()}: value_info the pre-processing added is kept: {sorted(added)[:5]}"
    assert q.quantized.get("conv1") == "int16", f"uint16 activations read back from the zero points: {q.quantized}"


def test_unnamed_nodes_get_names_and_old_opsets_convert(tmp_path) -> None:
    model = tiny_net(unnamed=True, opset=12)
    with Quantizer(model, random_calibration(model, 2, held_back=1)) as qz:
        q = qz.quantize(QuantizeOptions(preprocess=False, exclude_nodes=("Conv_2",)))
    assert "Conv_2" not in q.quantized and "MatMul_6" in q.quantized, q.quantized
    assert any("opset 12 to 13" in n for n in q.notes) and any("unnamed" in n for n in q.notes), q.notes
    assert q.model.opset_import[0].version == 13 and len(q.model.opset_import) == 1, q.model.opset_import


def test_preprocessing_leaves_no_symbolic_shape_dump_in_the_current_folder(tmp_path, monkeypatch) -> None:
    """onnxruntime's symbolic shape inference, when it cannot finish (an op it does not
    know), saves the model and its weights into the current folder and raises; the
    pre-processing retries without it and removes what it left. A user's own files stay."""
    from onnx import TensorProto, helper, numpy_helper

    from editor.quantize.prepare import SYMBOLIC_DUMP, prepare_model

    weight = numpy_helper.from_array(np.ones((64, 64), np.float32), "W")  # over onnx's 1 KB external threshold
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Foo", ["h"], ["y"], name="foo", domain="com.example")], "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    here = tmp_path / "cwd"
    here.mkdir()
    (here / "mine.data").write_bytes(b"user data")
    monkeypatch.chdir(here)
    (tmp_path / "work").mkdir()
    prepared = prepare_model(model, tmp_path / "work")
    assert any("without symbolic shape inference" in n for n in prepared.notes), prepared.notes
    assert sorted(p.name for p in here.iterdir()) == ["mine.data"], \
        f"left in the current folder: {sorted(p.name for p in here.iterdir())} (expected only mine.data, no {SYMBOLIC_DUMP})"


def test_preprocessing_is_onnxruntimes_own_made_from_memory_with_our_shapes(tmp_path, monkeypatch, net) -> None:
    """The prepared model has the nodes and weights onnxruntime's quant_pre_process makes;
    our shape engine stands in for its symbolic shape inference where every shape is
    static, and the weights reach the disk once (the file the quantizer reads)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    from editor.quantize.prepare import prepare_model, static_shapes

    onnx.save(net, str(tmp_path / "net.onnx"))
    quant_pre_process(str(tmp_path / "net.onnx"), str(tmp_path / "ort.onnx"))
    theirs = onnx.load(str(tmp_path / "ort.onnx"))
    calls: list[str] = []
    real = SymbolicShapeInference.infer_shapes
    monkeypatch.setattr(SymbolicShapeInference, "infer_shapes",
                        staticmethod(lambda model, *a: calls.append(model.graph.name) or real(model, *a)))
    (tmp_path / "ours").mkdir()
    ours = prepare_model(net, tmp_path / "ours")
    assert ours.preprocessed and not ours.notes and calls == [], (ours.notes, calls)
    assert list(ours.model.graph.node) == list(theirs.graph.node), \
        f"nodes: ours {[n.op_type for n in ours.model.graph.node]}, quant_pre_process {[n.op_type for n in theirs.graph.node]}"
    assert list(ours.model.graph.initializer) == list(theirs.graph.initializer), "weights differ from quant_pre_process's"
    assert {p.key for p in ours.model.metadata_props} == {p.key for p in theirs.metadata_props}, ours.model.metadata_props
    assert [p.name for p in (tmp_path / "ours").iterdir()] == [ours.path.name], list((tmp_path / "ours").iterdir())
    on_disk = onnx.load(str(ours.path))
    same = list(on_disk.graph.node) == list(ours.model.graph.node) and on_disk.metadata_props == theirs.metadata_props
    assert same, f"the file the quantizer reads is not the prepared model: {on_disk.metadata_props}"
    (tmp_path / "unnamed").mkdir()
    unnamed = prepare_model(tiny_net(unnamed=True), tmp_path / "unnamed")
    in_file = {n.name for n in onnx.load(str(unnamed.path)).graph.node}
    assert unnamed.preprocessed and set(unnamed.named.values()) <= in_file, (unnamed.named, unnamed.notes)
    # a symbolic batch: onnxruntime's symbolic shape inference declares the shapes, as it always did
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(net)
    dynamic.graph.name = "dynamic"
    for value in (dynamic.graph.input[0], dynamic.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "n"
    assert static_shapes(dynamic) is None and len(static_shapes(net) or []) == len(net.graph.node)
    (tmp_path / "dyn").mkdir()
    assert prepare_model(dynamic, tmp_path / "dyn").preprocessed and calls == ["dynamic"], calls


def test_cancel_stops_calibration(net) -> None:
    asked: list[str] = []
    with Quantizer(net, random_calibration(net, 3, held_back=1), progress=lambda _f, m: asked.append(m),
                   cancel=lambda: any("set 2" in m for m in asked)) as qz:
        with pytest.raises(QuantizeCancelled):
            qz.quantize(QuantizeOptions())
    assert any("set 1 of 3" in m for m in asked), asked


# -- proof, sensitivity, --auto ------------------------------------------------------------------


def test_proof_checks_runs_and_measures(quantizer, calibration, runner, net) -> None:
    reference = Reference(net, calibration.held_back, runner)
    proof = make_proof(quantizer.quantize(QuantizeOptions()), reference, independent=True)
    assert proof.checker is None and "CPU" in proof.ran_on, (proof.checker, proof.ran_on)
    (y,) = proof.outputs
    assert 0 < y.max_abs and 0 < y.rel_range < 0.5 and 0.95 < y.cosine < 1.0, y.text()
    assert proof.macs is not None and proof.macs.share("int8") == 1.0, proof.macs
    floaty = make_proof(quantizer.quantize(QuantizeOptions(exclude_ops=("Conv", "MatMul", "Relu", "Add", "Flatten",
                                                                         "GlobalAveragePool"))),
                        reference, independent=True)
    assert floaty.worst("abs") < 1e-4 and floaty.macs.share("int8") == 0.0, (floaty.lines(), floaty.macs)
    text = "\n".join(proof.lines())
    for words in ("checker: passes (full)", "relative to range", "cosine", "size:", "in int8"):
        assert words in text, f"{words!r} missing from:\n{text}"


def test_the_float_runs_start_early_and_give_what_they_give_late(net, calibration, runner) -> None:
    """Reference.start runs the float model in the worker while the caller goes on
    (QuantizeSession starts it before preparing); values() waits for the same outputs
    a late start gives, and a failure there is raised to the caller."""
    from editor.errors import RuntimeBackendError

    early = Reference(net, calibration.held_back, runner)
    early.start()
    late = Reference(net, calibration.held_back, runner).values()
    got = early.values()
    assert len(got) == len(late) == 2 and all(np.array_equal(a["y"], b["y"]) for a, b in zip(got, late)), \
        "the early float outputs differ from the late ones"
    wrong = Reference(net, [{"x": np.zeros((1, 3, 5, 5), np.float32)}], runner)  # the Conv wants 16 x 16
    wrong.start()
    with pytest.raises(RuntimeBackendError, match="float model does not run on the held-back inputs"):
        wrong.values()


def test_closing_a_session_ends_its_early_float_runs_and_their_worker(net, calibration) -> None:
    import threading

    from editor.quantize.session import QuantizeSession

    session = QuantizeSession(net, calibration)
    session.reference(QuantizeOptions()).start()
    runner = session.runner
    session.close()
    left = [t.name for t in threading.enumerate() if t.name == "onnx-studio-quantize-reference"]
    assert not left and runner.worker_pid is None, f"after close: threads {left}, worker {runner.worker_pid}"


@pytest.fixture(scope="module")
def spiked():
    model = tiny_net(spike=500.0)
    data = random_calibration(model, 4, held_back=2)
    with Quantizer(model, data) as qz:
        yield model, data, qz


def test_sensitivity_names_the_node_a_planted_outlier_hurts(spiked, runner) -> None:
    model, data, qz = spiked
    q = qz.quantize(QuantizeOptions())
    sens = measure_sensitivity(q, data.held_back[:1], runner)
    assert sens.ranking()[0] == "fc2", sens.lines()
    top = sens.rows[0]
    assert top.added > 10 * max(r.added for r in sens.rows[1:]), sens.lines()
    assert sens.comparison is not None and sens.comparison.first_divergence is not None


def test_auto_takes_the_planted_node_out_of_int8_with_its_tensors_at_16_bits(spiked, runner) -> None:
    model, data, qz = spiked
    reference = Reference(model, data.held_back, runner)
    plain = reference.measure(qz.quantize(QuantizeOptions()).model)[0]
    assert plain[0].rel_range > 0.05, f"the planted outlier should hurt: {plain[0].text()}"
    found = auto_quantize(qz, QuantizeOptions(), reference, 0.02, metric="range")
    assert found.reached and "fc2" in found.widened, found.lines()
    assert found.outputs[0].rel_range <= 0.02, found.outputs[0].text()
    # fc2's input (the outlier) at 16 bits; the Convs, far from it, stay int8
    kinds = found.quantized.quantized
    assert kinds.get("spike") == "int16" and kinds.get("conv1") == kinds.get("conv2") == "int8", kinds
    assert "s" in found.quantized.options.wide_tensors, found.quantized.options.wide_tensors
    # a widened MatMul keeps its weight in float (onnxruntime's MatMulNBits rewrite, auto._NBITS_PRONE)
    assert set(found.kept) == {n for n in found.widened if n.startswith("fc")}, (found.kept, found.widened)
    assert len(found.widened) < 4 and found.wide_tensors > 0, found.lines()
    # the whole model, the free nodes, the free tensors at 16 bits, every Conv/MatMul widened,
    # then one bisection over 4 nodes
    assert found.probes[0][0] == 0 and len(found.probes) <= 7, found.probes
    assert any("at 16 bits:" in line for line in found.lines()), found.lines()
    # every op type outside the Conv/MatMul family was measured alone in float, once, but those
    # whose nodes add next to nothing (1% of the most a free node adds)
    free = {"Relu", "Add", "Flatten", "GlobalAveragePool"}
    assert {t for t, _ in found.types} | set(found.silent) == free, (found.types, found.silent)
    assert not {t for t, _ in found.types} & set(found.silent), (found.types, found.silent)
    added = {t: max(r.added for r in found.sensitivity.rows if r.op_type == t) for t in free}
    top = max(added.values())
    assert all(added[t] <= 0.01 * top for t in found.silent), (added, found.silent)
    assert all(added[t] > 0.01 * top for t, _ in found.types), (added, found.types)


def test_auto_switches_to_percentile_calibration_when_it_clips_the_outlier_instead(spiked, runner) -> None:
    model, data, qz = spiked
    reference = Reference(model, data.held_back, runner)
    # 2% of the values clipped: the planted outlier is one of the 64 values of fc2's input per set
    found = auto_quantize(qz, QuantizeOptions(percentile=98.0), reference, 0.01, methods=("percentile",))
    assert found.reached and found.quantized.options.method == "percentile", found.lines()
    assert [m for m, _ in found.methods] == ["minmax", "percentile"], found.methods
    assert found.methods[1][1] < found.methods[0][1], f"percentile should be nearer the float model: {found.methods}"
    assert "fc2" not in found.kept and found.quantized.quantized.get("fc2") == "int8", found.lines()
    assert any("calibration: percentile" in line for line in found.lines()), found.lines()


def _row(node: str, op: str, added: float) -> NodeSensitivity:
    return NodeSensitivity(node, op, "int8", added, added, None, node + "_out")


def test_search_order_puts_the_helpful_types_first_and_no_mac_op() -> None:
    sens = Sensitivity([_row("conv1", "Conv", 0.5), _row("sm", "Softmax", 0.3), _row("add1", "Add", 0.2),
                        _row("mm", "MatMul", 0.1), _row("relu", "Relu", 0.08), _row("add2", "Add", 0.05),
                        _row("gap", "GlobalAveragePool", 0.01)], sets=1)
    # full error 0.2, tol 0.01: Softmax alone in float brings it to 0.05, Add to 0.15, Relu does nothing
    order = search_order(sens, [("Softmax", 0.05), ("Add", 0.15), ("Relu", 0.2), ("GlobalAveragePool", 0.2)],
                         0.2, 0.01, skip={"gap"})
    assert order == ["sm", "add1", "add2", "relu"], order


def test_cheapest_first_orders_by_macs_and_keeps_the_ranking_among_equals() -> None:
    macs = {"big": 1000, "dw": 10, "mid": 100, "dw2": 10}  # "se": no MACs the cost model knows
    assert cheapest_first(["big", "dw2", "se", "mid", "dw"], macs) == ["se", "dw2", "dw", "mid", "big"]


# -- the command line ----------------------------------------------------------------------------


def test_cli_quantizes_proves_and_reports_json(tmp_path, capsys) -> None:
    src = tmp_path / "net.onnx"
    onnx.save(tiny_net(), src)
    out = tmp_path / "net_int8.onnx"
    assert cli_main(["quantize", str(src), "-o", str(out), "--random", "3", "--held-back", "2", "--json",
                     "--sensitivity"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["proof"]["checker"] == "pass", report["proof"]
    assert report["calibration"]["random"] and report["proof"]["held_back_sets"] == 2, report["calibration"]
    assert report["proof"]["size_ratio"] < 1.0 and report["proof"]["macs"]["conv_matmul_int8_share"] == 1.0
    assert report["sensitivity"]["nodes"] and report["quantized_nodes"]["conv1"] == "int8", report["sensitivity"]
    onnx.checker.check_model(str(out), full_check=True)
    assert cli_main(["quantize", str(src), "-o", str(out), "--mode", "int4", "--random", "2"]) == 0
    text = capsys.readouterr().out
    assert "int4" in text and "WARNING" in text and f"wrote {out}" in text, text
    assert cli_main(["quantize", str(src), "-o", str(out), "--calibration", str(tmp_path / "none")]) == 1
    assert "calibration data not found" in capsys.readouterr().err
