"""LLM decoders are first-class (issue 32): contrib ops known, shapes, cost and runs.

The models are built here (tests/editor/decoders.py: onnx.helper decoders shaped like
onnxruntime-genai's builder output, int4 and fp32, and a zoo of one node per contrib op),
never downloaded.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper

from editor.blockquant import NBitsLayout, dequantized_parts, matmul_nbits_weight, packed_weights
from editor.cli import main as cli_main
from editor.cli.check import check_document
from editor.cost import model_cost
from editor.cost.per_token import token_cost
from editor.debug.mapping import map_tensors
from editor.decoder import find_layout
from editor.decoder.generate import GenerateOptions, generate
from editor.diff import diff_models
from editor.document import Document
from editor.runtime import ModelSource, Runner
from editor.runtime.inputs import make_inputs
from editor.schema import get_schema, ops_in_domain, schema_source
from editor.shapes import evaluate, infer_model
from editor.viewmodel.categories import category_of
from tests.editor.decoders import Config, contrib_zoo, quantize_nbits, write_decoder_folder

CFG = Config()
# runs in child processes: a loaded machine takes more than the 60 s default
pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def decoders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("decoders")
    return {kind: write_decoder_folder(root / kind, kind) for kind in ("int4", "fp32")}


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``onnx-studio ARGS`` in this process (an interpreter start per call costs more than
    the command): its exit code and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


# ----------------------------------------------------------------------------- operator knowledge


def test_onnxruntime_ops_are_known_with_onnx_first() -> None:
    mnb = get_schema("MatMulNBits", "com.microsoft", 1)
    assert mnb is not None and {"K", "N", "bits", "block_size"} <= set(mnb.attributes)
    assert mnb.attributes["K"].required and mnb.attributes["bits"].default_value.i == 4
    assert schema_source("MatMulNBits", "com.microsoft") == "onnxruntime"
    # onnxruntime registers SimplifiedLayerNormalization in the default domain
    assert get_schema("SimplifiedLayerNormalization", "", 21) is not None
    assert "SimplifiedLayerNormalization" in ops_in_domain("", 21)
    assert schema_source("Relu") == "onnx" and schema_source("LayerNormalization") == "onnx"
    # onnx has LayerNormalization from opset 17; onnxruntime runs older exports' opset-1 one
    assert schema_source("LayerNormalization", "", 13) == "onnxruntime"
    assert get_schema("LayerNormalization", "", 17).since_version == 17
    assert schema_source("Fancy", "com.example") == ""
    assert "Conv" in ops_in_domain("com.microsoft.nchwc", 1)  # every domain onnxruntime registers
    colours = {op: category_of(op, "com.microsoft", 1) for op in ("MatMulNBits", "GroupQueryAttention",
                                                                 "SkipSimplifiedLayerNormalization", "QuickGelu")}
    assert colours == {"MatMulNBits": "layer", "GroupQueryAttention": "layer",
                       "SkipSimplifiedLayerNormalization": "normalization", "QuickGelu": "activation"}, colours


@pytest.mark.parametrize("kind", ["int4", "fp32"])
def test_a_decoder_onnxruntime_runs_checks_clean(decoders, kind) -> None:
    doc = Document.open(decoders[kind])
    problems = check_document(doc, full=True)
    assert problems == [], [p.message for p in problems]


def _one_node(node: onnx.NodeProto, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = helper.make_graph([node], "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    return m


def _ort_refuses(m: onnx.ModelProto) -> bool:
    try:
        ort.InferenceSession(m.SerializeToString())
    except Exception:  # noqa: BLE001 - onnxruntime's load errors
        return True
    return False


def test_errors_where_onnxruntime_refuses_too() -> None:
    b, s, z = quantize_nbits(np.ones((32, 8), np.float32), 4, 32)
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((b, "b"), (s, "s"), (z, "z"))]
    y = [helper.make_tensor_value_info("y", T.FLOAT, [2, 8])]
    no_k = helper.make_node("MatMulNBits", ["x", "b", "s", "z"], ["y"], name="mm", domain="com.microsoft",
                            N=8, bits=4, block_size=32)
    ints = helper.make_node("MatMulNBits", ["x", "b", "s", "z"], ["y"], name="mm", domain="com.microsoft",
                            K=32, N=8, bits=4, block_size=32)
    cases = {"attr-missing": _one_node(no_k, [helper.make_tensor_value_info("x", T.FLOAT, [2, 32])], y, inits),
             "type-mismatch": _one_node(ints, [helper.make_tensor_value_info("x", T.INT32, [2, 32])], y, inits)}
    for code, m in cases.items():
        found = [(p.severity, p.code) for p in check_document(Document(m))]
        assert ("error", code) in found, (code, found)
        assert _ort_refuses(m), f"onnxruntime loads the model we call {code}"


def test_ops_no_runtime_knows_are_one_note_per_op_type(tmp_path) -> None:
    nodes = [helper.make_node("Fancy", ["x"], [f"y{k}"], name=f"f{k}", domain="com.example") for k in range(3)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info(f"y{k}", T.FLOAT, [2]) for k in range(3)])
    path = tmp_path / "fancy.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)]),
              path)
    r = run_cli("check", str(path))
    lines = [ln for ln in r.stdout.splitlines() if "Fancy" in ln]
    assert r.returncode == 0 and len(lines) == 1, r.stdout
    assert "(3 nodes)" in lines[0] and "onnx or onnxruntime" in lines[0], lines
    (rec,) = json.loads(run_cli("check", str(path), "--json").stdout)
    assert (rec["code"], rec["nodes"]) == ("custom-op", 3), rec


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("kind", ["int4", "fp32"])
def test_every_decoder_value_has_a_full_shape_equal_to_a_run(decoders, runner, kind) -> None:
    model = onnx.load(str(decoders[kind]))
    dims = {"batch_size": 1, "sequence_length": 3, "past_sequence_length": 4, "total_sequence_length": 7,
            "kv_cache_dim": CFG.head_size}
    _shapes_equal_a_run(model, decoders[kind], dims, runner)


def test_every_contrib_rule_equals_a_run(tmp_path, runner) -> None:
    path = tmp_path / "zoo.onnx"
    model = contrib_zoo()
    onnx.save(model, path)
    dims = {"batch": 1, "seq": 3, "past": 4, "total_len": 7}
    _shapes_equal_a_run(model, path, dims, runner, val_ranges={"pos": (0, 60), "ids": (0, 15), "ids32": (0, 15)})


def _shapes_equal_a_run(model, path, dims, runner, val_ranges=None) -> None:
    table = infer_model(model, dims)
    values = [o for n in model.graph.node for o in n.output if o]
    unknown = [v for v in values if table.get(v).dims is None or None in table.get(v).dims]
    assert not unknown, f"no full shape for {unknown}"
    feeds = make_inputs(model, "random", dims=dims, seed=0, val_ranges=val_ranges)
    result = runner.run(ModelSource.from_path(path), feeds, outputs=values, backend="ort", timeout=120)
    assert result.ok, result.error
    wrong = []
    for v in values:
        stated = [evaluate(d, dims) for d in table.get(v).dims]
        ran = list(np.shape(result.value(v)))
        if stated != ran:
            wrong.append(f"{v}: stated {stated}, ran {ran}")
    assert not wrong, "\n".join(wrong)


# ----------------------------------------------------------------------------- cost


def _independent_matmul_macs(cfg: Config, tokens: int) -> int:
    hs = cfg.head_size
    per_layer = cfg.hidden * (cfg.heads * hs + 2 * cfg.kv_heads * hs) + cfg.heads * hs * cfg.hidden \
        + 3 * cfg.hidden * cfg.intermediate
    return tokens * (cfg.layers * per_layer + cfg.hidden * cfg.vocab)


@pytest.mark.parametrize("kind", ["int4", "fp32"])
def test_matmul_macs_equal_an_independent_count(decoders, kind) -> None:
    model = onnx.load(str(decoders[kind]))
    dims = {"batch_size": 1, "sequence_length": 5, "past_sequence_length": 0, "total_sequence_length": 5,
            "kv_cache_dim": CFG.head_size}
    cost = model_cost(model, dims)
    matmuls = sum(n.macs for n in cost.nodes if n.op_type in ("MatMul", "MatMulNBits"))
    assert matmuls == _independent_matmul_macs(CFG, 5)
    attention = sum(n.macs for n in cost.nodes if n.op_type == "GroupQueryAttention")
    assert attention == CFG.layers * 5 * 5 * 2 * CFG.hidden  # Q·Kᵀ and ·V over the 5 keys
    if kind == "int4":  # the packed weights: K x N values at 4 bits
        assert cost.weight_bytes_by_type["int4"] == _independent_matmul_macs(CFG, 1) // 2, cost.weight_bytes_by_type


def test_per_token_figures(decoders) -> None:
    model = onnx.load(str(decoders["int4"]))
    layout = find_layout(model, decoders["int4"].parent)
    assert (layout.source, layout.past_dim, layout.total_dim, layout.layers) == (
        "genai_config.json", "past_sequence_length", "total_sequence_length", CFG.layers)
    tc = token_cost(model, layout, prompt=10, context=20)
    kv = CFG.layers * 2 * CFG.kv_heads * CFG.head_size * 4
    assert tc.kv_bytes_per_token == kv
    assert tc.decode_macs == _independent_matmul_macs(CFG, 1) + CFG.layers * 21 * 2 * CFG.hidden + _small_ops(
        model, {"batch_size": 1, "sequence_length": 1, "past_sequence_length": 20, "total_sequence_length": 21,
                "kv_cache_dim": CFG.head_size})
    assert tc.decode_bytes == tc.weight_bytes + 20 * kv


def _small_ops(model, dims) -> int:
    cost = model_cost(model, dims)
    return sum(n.macs for n in cost.nodes if n.op_type not in ("MatMul", "MatMulNBits", "GroupQueryAttention"))


# ----------------------------------------------------------------------------- runs


def test_run_random_feeds_an_empty_cache(decoders) -> None:
    for kind in ("int4", "fp32"):
        feeds = make_inputs(onnx.load(str(decoders[kind])), "random", seed=0)
        assert feeds["past_key_values.0.key"].shape == (1, CFG.kv_heads, 0, CFG.head_size), kind
        assert feeds["attention_mask"].shape == feeds["input_ids"].shape and feeds["attention_mask"].all(), kind
    r = run_cli("run", str(decoders["int4"]), "--random")
    assert r.returncode == 0, r.stderr
    assert "present.1.value" in r.stdout


def test_a_chosen_past_length_keeps_the_mask_and_total_consistent(decoders) -> None:
    feeds = make_inputs(onnx.load(str(decoders["int4"])), "random", seed=0,
                        dims={"past_sequence_length": 6, "sequence_length": 1})
    assert feeds["past_key_values.1.value"].shape[2] == 6
    assert feeds["attention_mask"].shape == (1, 7) and feeds["input_ids"].shape == (1, 1)
    outs = ort.InferenceSession(str(decoders["int4"])).run(["present.0.key"], feeds)
    assert outs[0].shape == (1, CFG.kv_heads, 7, CFG.head_size)


def test_matmul_nbits_weights_dequantize_as_onnxruntime_multiplies() -> None:
    rng = np.random.default_rng(0)
    for bits, block, k, n in ((4, 32, 64, 24), (4, 16, 40, 8), (2, 32, 64, 8), (8, 32, 64, 8)):
        b, s, z = quantize_nbits(rng.standard_normal((k, n)).astype(np.float32), bits, block)
        node = helper.make_node("MatMulNBits", ["x", "b", "s", "z"], ["y"], domain="com.microsoft", K=k, N=n,
                                bits=bits, block_size=block)
        inits = [onnx.numpy_helper.from_array(a, name) for a, name in ((b, "b"), (s, "s"), (z, "z"))]
        m = _one_node(node, [helper.make_tensor_value_info("x", T.FLOAT, [3, k])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [3, n])], inits)
        x = rng.standard_normal((3, k)).astype(np.float32)
        y = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
        w = matmul_nbits_weight(NBitsLayout(k, n, bits, block), b, s, z)
        np.testing.assert_allclose(x @ w, y, rtol=1e-5, atol=1e-5, err_msg=f"bits {bits} block {block} K {k}")



# ----------------------------------------------------------------------------- generate, compare

PROMPT = "the quick brown fox"


@pytest.mark.parametrize("kind", ["int4", "fp32"])
def test_greedy_tokens_equal_onnxruntime_genai(decoders, runner, kind) -> None:
    folder = decoders[kind].parent
    genai = generate(folder, PROMPT, GenerateOptions(max_new_tokens=12, engine="genai"))
    loop = generate(folder, PROMPT, GenerateOptions(max_new_tokens=12, engine="loop"), runner=runner)
    assert (genai.engine, loop.engine) == ("onnxruntime-genai", "loop")
    assert loop.prompt_ids == genai.prompt_ids, "the two tokenizers read the prompt differently"
    assert loop.tokens == genai.tokens, f"loop {loop.tokens} vs onnxruntime-genai {genai.tokens}"
    assert len(loop.steps) == 12 and loop.steps[0].tokens_in == len(loop.prompt_ids) and loop.steps[1].tokens_in == 1


def test_generate_cli_streams_tokens_and_captures_a_value_at_step_k(decoders, tmp_path) -> None:
    folder = decoders["int4"].parent
    value = "/model/layers.1/attn/GroupQueryAttention/output_0"
    r = run_cli("generate", str(folder), "--prompt", PROMPT, "--max-new-tokens", "4", "--greedy", "--engine", "loop",
                "--capture", value, "--at-step", "2", "--save", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(PROMPT) and "prefill" in r.stderr and "ms/token" in r.stderr, (r.stdout, r.stderr)
    (saved,) = tmp_path.glob("*.npy")
    assert np.load(saved).shape == (1, 1, CFG.hidden)  # one new token at step 2
    data = json.loads(run_cli("generate", str(folder), "--prompt", PROMPT, "--max-new-tokens", "3", "--greedy",
                              "--json").stdout)
    assert len(data["tokens"]) == 3 and data["engine"] == "onnxruntime-genai" and data["prefill_ms"] > 0


def test_generate_refuses_what_it_cannot_do(decoders, tmp_path) -> None:
    plain = tmp_path / "plain.onnx"
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    onnx.save(helper.make_model(g), plain)  # no KV cache
    r = run_cli("generate", str(plain), "--prompt", "x", "--engine", "loop")
    assert r.returncode == 2 and "not a decoder" in r.stderr, r.stderr
    r = run_cli("generate", str(decoders["int4"].parent), "--prompt", "x", "--engine", "genai", "--capture", "logits")
    assert r.returncode == 2 and "loop engine" in r.stderr, r.stderr


def test_fp32_vs_int4_maps_every_tensor_through_the_rewrite(decoders) -> None:
    a, b = onnx.load(str(decoders["fp32"])), onnx.load(str(decoders["int4"]))
    tm = map_tensors(a, b)
    assert tm.coverage() >= 0.9, [p.a for p in tm.pairs if p.b is None]
    linear = [p for p in tm.pairs if p.a.endswith("/MatMul/output_0")]
    assert linear and all(p.how == "rewrite" and p.b.endswith("/MatMulNBits/output_0") for p in linear), linear
    d = diff_models(Document(a), Document(b))
    assert {rw.summary for rw in d.rewrites} == {"MatMul quantized to int4 (MatMulNBits)"}, [rw.summary for rw in d.rewrites]


def test_int4_weights_read_as_their_dequantized_values(decoders) -> None:
    from editor.summary import summarize
    from editor.weights import block_scales, list_weights, weight_stats

    doc = Document.open(decoders["int4"])
    w = next(w for w in list_weights(doc) if w.name == "/lm_head.weight_Q4")
    stats = weight_stats(doc, w, chunk_elements=1000)  # several chunks of columns
    pw_node = next(n for n in doc.model.graph.node if n.name == "/lm_head/MatMulNBits")
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in doc.model.graph.initializer}
    dense = matmul_nbits_weight(NBitsLayout(CFG.hidden, CFG.vocab, 4, CFG.block_size), *(inits[n] for n in pw_node.input[1:]))
    assert (stats.dtype, stats.shape, stats.count) == ("int4 (MatMulNBits)", (CFG.hidden, CFG.vocab), dense.size)
    assert stats.min == pytest.approx(float(dense.min())) and stats.max == pytest.approx(float(dense.max()))
    assert stats.mean == pytest.approx(float(dense.mean()), abs=1e-6) and stats.std == pytest.approx(float(dense.std()), rel=1e-5)
    assert sum(stats.histogram_counts) == dense.size and "dequantized" in stats.note
    assert block_scales(doc, w).shape == (CFG.vocab, CFG.hidden // CFG.block_size)
    by_dtype = summarize(doc).weights_by_dtype
    assert by_dtype["int4 (MatMulNBits)"]["parameters"] == _independent_matmul_macs(CFG, 1), by_dtype


def test_block_quantized_embedding_tables_dequantize_as_onnxruntime_gathers() -> None:
    rng = np.random.default_rng(1)
    rows, cols, block = 12, 64, 16
    b, s, z = quantize_nbits(rng.standard_normal((cols, rows)).astype(np.float32), 4, block)  # blocks per row
    data, scales, zp = b.reshape(rows, -1), s.reshape(rows, -1), z.reshape(rows, -1)
    for with_zp in (True, False):
        names = ["data", "ids", "scales"] + (["zp"] if with_zp else [])
        inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((data, "data"), (scales, "scales"), (zp, "zp"))
                 if n in names]
        node = helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft", gather_axis=0,
                                quantize_axis=1, block_size=block, bits=4)
        m = _one_node(node, [helper.make_tensor_value_info("ids", T.INT64, [rows])],
                      [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
        y = ort.InferenceSession(m.SerializeToString()).run(None, {"ids": np.arange(rows)})[0]
        pw = packed_weights(m.graph)["data"]
        ours = np.concatenate(list(dequantized_parts(pw, data, scales, zp if with_zp else None, 5)), axis=0)
        assert (pw.label, pw.shape) == ("int4 (GatherBlockQuantized)", (rows, cols))
        np.testing.assert_array_equal(ours, y, err_msg=f"zero points given: {with_zp}")
