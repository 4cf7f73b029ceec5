"""Merge, I/O types, weights <-> inputs, pattern replacement and the scripting API on real models."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto

from editor.cli import main as cli_main
from editor.document import Document
from editor.errors import CommandError
from editor.passes.extract import extract_model
from editor.runtime import Runner
from editor.scripting import ScriptAPI, ScriptError
from editor.surgery.compare import inputs_for, run_values
from editor.surgery.io_types import SetIOTypes, fits
from editor.surgery.merge import MergeModel, merge_models
from editor.surgery.patterns import Op, Pattern, ReplacePattern, find_matches
from editor.surgery.weights_inputs import InitializerToInput, InputToInitializer
from editor.validation import Validator, count_errors
from tests.conftest import CORPUS

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"
RESNET = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"


def _errors(doc: Document) -> int:
    return count_errors(Validator(doc, live=False).validate_all())


def _halves(path) -> tuple[Document, onnx.ModelProto, onnx.ModelProto]:
    doc = Document.open(path)
    ids = list(doc.main.node_ids)
    k = len(ids) // 2
    return doc, extract_model(doc, node_ids=ids[:k]), extract_model(doc, node_ids=ids[k:])


@pytest.mark.timeout(120)
def test_cut_in_two_and_merged_back_gives_identical_outputs() -> None:
    doc, a, b = _halves(MAGIKA)
    merged = merge_models(a, b)
    onnx.checker.check_model(merged.model, full_check=True)
    assert [o.name for o in merged.model.graph.output] == [o.name for o in doc.model.graph.output]
    assert merged.renamed, "the halves share constant names: they are renamed and said"
    assert any("renamed" in n for n in merged.notes)
    with Runner() as runner:
        x = inputs_for(doc.model)
        want, got = run_values(runner, doc.model, x), run_values(runner, merged.model, x)
    assert want.keys() == got.keys()
    for name in want:
        assert np.array_equal(want[name], got[name]), name  # bit-identical on the CPU provider


def test_merge_reconciles_opsets_or_refuses_with_reason() -> None:
    doc, a, b = _halves(MAGIKA)
    b14 = onnx.version_converter.convert_version(b, 14)
    merged = merge_models(a, b14)
    assert any("converted from opset 14 to 15" in n for n in merged.notes)
    assert {o.domain: o.version for o in merged.model.opset_import}[""] == 15
    onnx.checker.check_model(merged.model)
    odd = onnx.ModelProto()
    odd.CopyFrom(b)
    for o in odd.opset_import:
        if o.domain == "ai.onnx.ml":
            o.version = 1
    with pytest.raises(CommandError, match="ai.onnx.ml"):
        merge_models(a, odd)
    with pytest.raises(CommandError, match="has no value"):
        merge_models(a, b, {"nope": b.graph.input[0].name})


def test_merge_command_undo_and_cli(tmp_path, capsys) -> None:
    doc, a, b = _halves(MAGIKA)
    da = Document(a)
    before = da.model.SerializeToString()
    da.execute(MergeModel(b))
    assert _errors(da) == 0 and len(da.model.graph.node) == len(doc.model.graph.node)
    da.undo()
    assert da.model.SerializeToString() == before
    onnx.save(a, tmp_path / "a.onnx")
    onnx.save(b, tmp_path / "b.onnx")
    out = tmp_path / "m.onnx"
    assert cli_main(["merge", str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx"), "-o", str(out)]) == 0
    assert "renamed" in capsys.readouterr().out
    assert cli_main(["merge", str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx"), "-o", str(out),
                     "--map", "x=y"]) == 1
    assert capsys.readouterr().err.startswith("error:")


def test_fits_is_about_values() -> None:
    assert fits(TensorProto.INT32, TensorProto.INT64) and not fits(TensorProto.INT64, TensorProto.INT32)
    assert fits(TensorProto.FLOAT16, TensorProto.FLOAT) and not fits(TensorProto.FLOAT, TensorProto.FLOAT16)
    assert fits(TensorProto.INT16, TensorProto.FLOAT) and not fits(TensorProto.INT32, TensorProto.FLOAT)
    assert not fits(TensorProto.INT64, TensorProto.DOUBLE) and not fits(TensorProto.FLOAT, TensorProto.INT64)


@pytest.mark.timeout(120)
def test_set_io_type_on_a_real_model(tmp_path, capsys) -> None:
    out = tmp_path / "t.onnx"
    assert cli_main(["set-io-type", str(MAGIKA), "-o", str(out), "bytes=uint8", "target_label=float64"]) == 0
    m = onnx.load(str(out))
    assert m.graph.input[0].type.tensor_type.elem_type == TensorProto.UINT8
    assert m.graph.output[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    assert _errors(Document(m)) == 0
    onnx.checker.check_model(m, full_check=True)
    original = onnx.load(str(MAGIKA))
    with Runner() as runner:
        x = inputs_for(original)
        x = {k: (v % 256).astype(np.int32) for k, v in x.items()}
        want = run_values(runner, original, x)["target_label"]
        got = run_values(runner, m, x)["target_label"]
    assert got.dtype == np.float64 and np.array_equal(want.astype(np.float64), got)
    # int64 values do not fit an int32 model input: refused unless asked
    assert cli_main(["set-io-type", str(MAGIKA), "-o", str(out), "bytes=int64"]) == 1
    assert "do not all fit" in capsys.readouterr().err
    assert cli_main(["set-io-type", str(MAGIKA), "-o", str(out), "bytes=int64", "--allow-lossy"]) == 0
    doc = Document.open(MAGIKA)
    with pytest.raises(CommandError):
        doc.execute(SetIOTypes({"nope": TensorProto.INT32}))
    assert not doc.is_modified


@pytest.mark.timeout(120)
def test_weight_to_input_and_back() -> None:
    doc = Document.open(VAD)
    before = doc.model.SerializeToString()
    api = ScriptAPI(doc)
    name = doc.model.graph.initializer[0].name
    value = np.array(api.weight(name))
    assert np.array_equal(value, onnx.numpy_helper.to_array(doc.model.graph.initializer[0]))
    doc.execute(InitializerToInput(name))
    assert name in api.inputs() and doc.initializer(doc.index.main, name) is None
    assert _errors(doc) == 0
    doc.execute(InputToInitializer(name, value))
    assert name not in api.inputs()
    with Runner() as runner:
        x = inputs_for(onnx.load(str(VAD)))
        assert all(np.array_equal(a, b) for a, b in zip(run_values(runner, onnx.load(str(VAD)), x).values(),
                                                         run_values(runner, doc.model, x).values()))
    doc.undo()
    doc.undo()
    assert doc.model.SerializeToString() == before
    doc.execute(InitializerToInput(name, keep_default=True))
    assert name in api.inputs(scope=None) or name in [i.name for i in doc.model.graph.input]
    assert doc.initializer(doc.index.main, name) is not None
    with pytest.raises(CommandError, match="float32"):
        doc.execute(InputToInitializer(name, value.astype(np.float64)))


def test_replace_pattern_all_or_chosen_and_undo() -> None:
    doc = Document.open(RESNET)
    before = doc.model.SerializeToString()
    pat = Pattern([Op("BatchNormalization", ["x", "s", "b", "m", "v"], ["c"], name="bn",
                      attrs={"epsilon": lambda e: e < 1e-3}),
                   Op("Relu", ["c"], ["y"])])
    found = find_matches(doc.model.graph, pat)
    g = doc.model.graph
    producer = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    expected = sum(1 for n in g.node if n.op_type == "Relu" and producer.get(n.input[0]) is not None
                   and producer[n.input[0]].op_type == "BatchNormalization" and readers[n.input[0]] == 1)
    assert len(found) == expected > 0
    fused = [Op("BnRelu", ["x", "s", "b", "m", "v"], ["y"], domain="custom.fused",
                attrs=lambda m: {"epsilon": m.attributes("bn")["epsilon"]})]
    cmd = ReplacePattern(pat, fused)
    doc.execute(cmd)
    assert cmd.count == len(found)
    ops = [n.op_type for n in doc.model.graph.node]
    assert ops.count("BnRelu") == len(found) and "custom.fused" in {o.domain for o in doc.model.opset_import}
    doc.undo()
    assert doc.model.SerializeToString() == before
    # chosen occurrences, replaced with a standard subgraph: still a valid model
    same = [Op("BatchNormalization", ["x", "s", "b", "m", "v"], ["c2"], attrs=lambda m: m.attributes("bn")),
            Op("Relu", ["c2"], ["y"])]
    cmd = ReplacePattern(pat, same, which=[0, 2])
    doc.execute(cmd)
    assert cmd.count == 2 and _errors(doc) == 0
    onnx.checker.check_model(doc.model)
    with pytest.raises(CommandError, match="does not exist"):
        doc.execute(ReplacePattern(pat, same, which=[10_000]))


def test_pattern_is_checked() -> None:
    with pytest.raises(CommandError, match="feed"):
        Pattern([Op("Relu", ["a"], ["b"]), Op("Relu", ["c"], ["d"])])


def test_script_add_node_between_nodes_keeps_graph_order_and_types_new_outputs() -> None:
    doc = Document.open(VAD)
    api = ScriptAPI(doc)
    first = doc.model.graph.node[0]
    src = first.output[0]
    readers = doc.consumers(doc.index.main, src)
    nid = api.add_node("Identity", [src], ["tapped"])
    for reader, k in readers:
        api.set_input(reader, k, "tapped")
    assert _errors(doc) == 0, "the node went after its producer, not at the end"
    api.add_output("tapped")
    out = doc.model.graph.output[-1]
    assert out.name == "tapped" and out.type.tensor_type.elem_type != 0
    assert _errors(doc) == 0
    # a node reading what an earlier node depends on would close a cycle
    with pytest.raises(ScriptError, match="cycle"):
        api.add_node("Identity", [doc.model.graph.output[0].name], [src])
    assert doc.has_node(nid)


def test_a_script_replaces_a_pattern_and_freezes_an_input(tmp_path) -> None:
    from editor.scripting import run_script_source

    doc = Document.open(RESNET)
    source = '''
pat = surgery.Pattern([surgery.Op("BatchNormalization", ["x", "s", "b", "m", "v"], ["c"], name="bn"),
                       surgery.Op("Relu", ["c"], ["y"])])
hits = surgery.find_matches(doc.model.graph, pat)
doc.execute(surgery.ReplacePattern(pat, [surgery.Op("BnRelu", ["x", "s", "b", "m", "v"], ["y"], domain="my.ops")]))
doc.execute(surgery.InitializerToInput(doc.model.graph.initializer[0].name))
'''
    ns = run_script_source(source, doc)
    assert len(ns["hits"]) > 0
    assert sum(n.op_type == "BnRelu" for n in doc.model.graph.node) == len(ns["hits"])
    assert doc.stack.index == 2


@pytest.mark.timeout(120)
def test_merge_keeps_external_weights_and_metadata(tmp_path, capsys) -> None:
    doc, a, b = _halves(MAGIKA)
    onnx.helper.set_model_props(a, {"author": "a", "shared": "from a"})
    onnx.helper.set_model_props(b, {"license": "b", "shared": "from b"})
    for name, m in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        onnx.save(m, str(tmp_path / name / f"{name}.onnx"), save_as_external_data=True,
                  all_tensors_to_one_file=True, location=f"{name}.data", size_threshold=0)
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    assert cli_main(["merge", str(tmp_path / "a" / "a.onnx"), str(tmp_path / "b" / "b.onnx"), "-o", str(out)]) == 0
    assert "A's value kept" in capsys.readouterr().out
    merged = onnx.load(str(out))  # every external weight resolves from the output's folder
    props = {p.key: p.value for p in merged.metadata_props}
    assert props == {"author": "a", "shared": "from a", "license": "b"}
    with Runner() as runner:
        x = inputs_for(doc.model)
        want, got = run_values(runner, doc.model, x), run_values(runner, merged, x)
    assert all(np.array_equal(want[k], got[k]) for k in want)


def test_set_io_type_on_a_model_without_the_default_domain() -> None:
    from editor.surgery.io_types import set_io_types

    iris = onnx.load(str(CORPUS / "real" / "ort_logreg_iris.onnx"))  # only ai.onnx.ml ops
    out = set_io_types(iris, {"float_input": TensorProto.FLOAT16})
    onnx.checker.check_model(out, full_check=True)  # the Cast brought its opset import
    assert out.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT16
