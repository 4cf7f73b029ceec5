"""Tiny LLM decoders built with onnx.helper, shaped like onnxruntime-genai's builder output.

Random weights, a handful of layers, made at test time (no binaries in the repository):
``input_ids``/``attention_mask``/``past_key_values.N.key|value`` in, ``logits`` and
``present.N.key|value`` out; SimplifiedLayerNormalization and SkipSimplifiedLayer-
Normalization (onnxruntime's default-domain and contrib norms), GroupQueryAttention with
a KV cache and rotary embedding, a SiLU MLP. ``kind="int4"`` stores every projection as a
``MatMulNBits`` of the same weights that ``kind="fp32"`` multiplies as a plain ``MatMul``,
so an fp32-vs-int4 comparison of the two is a real quantization error and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper


@dataclass(frozen=True)
class Config:
    vocab: int = 320
    hidden: int = 64
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 128
    layers: int = 2
    max_positions: int = 64
    block_size: int = 32
    bits: int = 4
    seed: int = 0

    @property
    def head_size(self) -> int:
        return self.hidden // self.heads


def quantize_nbits(w: np.ndarray, bits: int, block_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``w[K, N]`` as MatMulNBits' (B, scales, zero_points): asymmetric, per block of K."""
    k, n = w.shape
    blocks = -(-k // block_size)
    padded = np.zeros((blocks * block_size, n), np.float32)
    padded[:k] = w
    cols = padded.T.reshape(n, blocks, block_size)
    top = (1 << bits) - 1
    lo, hi = np.minimum(cols.min(axis=2), 0), np.maximum(cols.max(axis=2), 0)
    scale = np.where(hi > lo, (hi - lo) / top, 1.0).astype(np.float32)
    zp = np.clip(np.round(-lo / scale), 0, top).astype(np.uint8)
    q = np.clip(np.round(cols / scale[..., None]) + zp[..., None], 0, top).astype(np.uint8)
    per_byte = 8 // bits
    shifts = (np.arange(per_byte) * bits).astype(np.uint8)
    packed = (q.reshape(n, blocks, -1, per_byte) << shifts).sum(axis=-1).astype(np.uint8)
    zp_cols = -(-blocks * bits // 8)
    zp_pad = np.zeros((n, zp_cols * per_byte), np.uint8)
    zp_pad[:, :blocks] = zp
    zp_packed = (zp_pad.reshape(n, zp_cols, per_byte) << shifts).sum(axis=-1).astype(np.uint8)
    return packed, scale.reshape(-1), zp_packed.reshape(-1)


class _Builder:
    def __init__(self, cfg: Config, kind: str) -> None:
        self.cfg, self.kind = cfg, kind
        self.rng = np.random.default_rng(cfg.seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def weight(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.array(array, copy=True, order="C"), name))
        return name

    def node(self, op: str, inputs: list[str], outputs: list[str], name: str, domain: str = "", **attrs) -> None:
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))

    def linear(self, x: str, k: int, n: int, scope: str) -> str:
        """A projection: MatMul of fp32 weights, or MatMulNBits of the same weights."""
        w = (self.rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        # named after the op, as exporters and quantizers do: a comparison of the two kinds
        # cannot pair these values by name, only through the MatMul -> MatMulNBits rewrite
        out = f"{scope}/{'MatMul' if self.kind == 'fp32' else 'MatMulNBits'}/output_0"
        if self.kind == "fp32":
            self.node("MatMul", [x, self.weight(f"{scope}.weight", w)], [out], f"{scope}/MatMul")
            return out
        cfg = self.cfg
        b, scales, zp = quantize_nbits(w, cfg.bits, cfg.block_size)
        self.node("MatMulNBits", [x, self.weight(f"{scope}.weight_Q{cfg.bits}", b),
                                  self.weight(f"{scope}.weight_scales", scales),
                                  self.weight(f"{scope}.weight_zp", zp)],
                  [out], f"{scope}/MatMulNBits", domain="com.microsoft",
                  K=k, N=n, bits=cfg.bits, block_size=cfg.block_size, accuracy_level=0)
        return out

    def norm(self, x: str, skip: str | None, scope: str) -> tuple[str, str | None]:
        gamma = self.weight(f"{scope}.weight", (1 + 0.1 * self.rng.standard_normal(self.cfg.hidden)).astype(np.float32))
        out = f"{scope}/output_0"
        if skip is None:
            self.node("SimplifiedLayerNormalization", [x, gamma], [out], f"{scope}/SimplifiedLayerNorm",
                      axis=-1, epsilon=1e-6, stash_type=1)
            return out, None
        residual = f"{scope}/output_3"
        self.node("SkipSimplifiedLayerNormalization", [x, skip, gamma], [out, "", "", residual],
                  f"{scope}/SkipLayerNorm", domain="com.microsoft", epsilon=1e-6)
        return out, residual

    def build(self) -> onnx.ModelProto:
        cfg = self.cfg
        hs = cfg.head_size
        embed = self.weight("model.embed_tokens.weight",
                            (0.5 * self.rng.standard_normal((cfg.vocab, cfg.hidden))).astype(np.float32))
        self.node("Gather", [embed, "input_ids"], ["/model/embed_tokens/output_0"], "/model/embed_tokens/Gather")
        # what GroupQueryAttention needs from the mask: per-row lengths - 1 and the total length
        self.node("ReduceSum", ["attention_mask", self.weight("/model/attn_mask_reformat/one", np.array([1], np.int64))],
                  ["/model/attn_mask_reformat/sum"], "/model/attn_mask_reformat/ReduceSum", keepdims=0)
        self.node("Sub", ["/model/attn_mask_reformat/sum", self.weight("/model/attn_mask_reformat/one_s", np.array(1, np.int64))],
                  ["/model/attn_mask_reformat/seqlens"], "/model/attn_mask_reformat/Sub")
        self.node("Cast", ["/model/attn_mask_reformat/seqlens"], ["seqlens_k"], "/model/attn_mask_reformat/Cast", to=T.INT32)
        self.node("Shape", ["attention_mask"], ["/model/attn_mask_reformat/shape"], "/model/attn_mask_reformat/Shape")
        self.node("Gather", ["/model/attn_mask_reformat/shape", self.weight("/model/attn_mask_reformat/idx", np.array(1, np.int64))],
                  ["/model/attn_mask_reformat/total"], "/model/attn_mask_reformat/Gather", axis=0)
        self.node("Cast", ["/model/attn_mask_reformat/total"], ["total_seq_len"], "/model/attn_mask_reformat/Cast_1",
                  to=T.INT32)
        inv = 1.0 / (10000 ** (np.arange(0, hs, 2, dtype=np.float32) / hs))
        freqs = np.outer(np.arange(cfg.max_positions, dtype=np.float32), inv)
        cos = self.weight("cos_cache", np.cos(freqs).astype(np.float32))
        sin = self.weight("sin_cache", np.sin(freqs).astype(np.float32))
        x, skip = "/model/embed_tokens/output_0", None
        for i in range(cfg.layers):
            scope = f"/model/layers.{i}"
            h, residual = self.norm(x, skip, f"{scope}/input_layernorm")
            skip = residual if residual is not None else x
            q = self.linear(h, cfg.hidden, cfg.heads * hs, f"{scope}/attn/q_proj")
            k = self.linear(h, cfg.hidden, cfg.kv_heads * hs, f"{scope}/attn/k_proj")
            v = self.linear(h, cfg.hidden, cfg.kv_heads * hs, f"{scope}/attn/v_proj")
            attn = f"{scope}/attn/GroupQueryAttention/output_0"
            self.node("GroupQueryAttention",
                      [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k",
                       "total_seq_len", cos, sin],
                      [attn, f"present.{i}.key", f"present.{i}.value"], f"{scope}/attn/GroupQueryAttention",
                      domain="com.microsoft", num_heads=cfg.heads, kv_num_heads=cfg.kv_heads, do_rotary=1,
                      rotary_interleaved=0, scale=float(1 / np.sqrt(hs)))
            o = self.linear(attn, cfg.heads * hs, cfg.hidden, f"{scope}/attn/o_proj")
            h, skip = self.norm(o, skip, f"{scope}/post_attention_layernorm")
            gate = self.linear(h, cfg.hidden, cfg.intermediate, f"{scope}/mlp/gate_proj")
            up = self.linear(h, cfg.hidden, cfg.intermediate, f"{scope}/mlp/up_proj")
            self.node("Sigmoid", [gate], [f"{scope}/mlp/act_fn/Sigmoid/output_0"], f"{scope}/mlp/act_fn/Sigmoid")
            self.node("Mul", [gate, f"{scope}/mlp/act_fn/Sigmoid/output_0"], [f"{scope}/mlp/act_fn/Mul/output_0"],
                      f"{scope}/mlp/act_fn/Mul")
            self.node("Mul", [f"{scope}/mlp/act_fn/Mul/output_0", up], [f"{scope}/mlp/Mul/output_0"], f"{scope}/mlp/Mul")
            x = self.linear(f"{scope}/mlp/Mul/output_0", cfg.intermediate, cfg.hidden, f"{scope}/mlp/down_proj")
        h, _ = self.norm(x, skip, "/model/layers.final_norm_layernorm")
        logits = self.linear(h, cfg.hidden, cfg.vocab, "/lm_head")
        self.node("Identity", [logits], ["logits"], "/lm_head/Identity")
        # onnxruntime-genai 0.18's builder names the head size: the attention op fixes it
        past_dims = ["batch_size", cfg.kv_heads, "past_sequence_length", "kv_cache_dim"]
        present_dims = ["batch_size", cfg.kv_heads, "total_sequence_length", "kv_cache_dim"]
        inputs = [helper.make_tensor_value_info("input_ids", T.INT64, ["batch_size", "sequence_length"]),
                  helper.make_tensor_value_info("attention_mask", T.INT64, ["batch_size", "total_sequence_length"])]
        outputs = [helper.make_tensor_value_info("logits", T.FLOAT, ["batch_size", "sequence_length", cfg.vocab])]
        for i in range(cfg.layers):
            for kv in ("key", "value"):
                inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", T.FLOAT, past_dims))
                outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", T.FLOAT, present_dims))
        graph = helper.make_graph(self.nodes, "main_graph", inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                        helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 10
        return model


def tiny_decoder(kind: str = "int4", cfg: Config = Config()) -> onnx.ModelProto:
    """A decoder of ``cfg``'s size with ``kind`` 'int4' (MatMulNBits) or 'fp32' (MatMul)."""
    if kind not in ("int4", "fp32"):
        raise ValueError(f"kind {kind!r}: 'int4' or 'fp32'")
    return _Builder(cfg, kind).build()


def genai_config(cfg: Config = Config(), model_file: str = "model.onnx") -> dict:
    """The ``genai_config.json`` onnxruntime-genai's builder writes beside such a model."""
    inputs = {"input_ids": "input_ids", "attention_mask": "attention_mask",
              "past_key_names": "past_key_values.%d.key", "past_value_names": "past_key_values.%d.value"}
    outputs = {"logits": "logits", "present_key_names": "present.%d.key", "present_value_names": "present.%d.value"}
    return {
        "model": {
            "bos_token_id": 1, "context_length": cfg.max_positions, "eos_token_id": 2, "pad_token_id": 0,
            "type": "qwen2", "vocab_size": cfg.vocab,
            "decoder": {"session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                        "filename": model_file, "head_size": cfg.head_size, "hidden_size": cfg.hidden,
                        "inputs": inputs, "outputs": outputs, "num_attention_heads": cfg.heads,
                        "num_hidden_layers": cfg.layers, "num_key_value_heads": cfg.kv_heads},
        },
        "search": {"do_sample": False, "max_length": cfg.max_positions, "min_length": 0, "num_beams": 1,
                   "num_return_sequences": 1, "past_present_share_buffer": False, "repetition_penalty": 1.0,
                   "temperature": 1.0, "top_k": 1, "top_p": 1.0},
    }


TEXT = ("the quick brown fox jumps over the lazy dog. a model of the llm era is first class. "
        "onnx studio shows shapes and cost on every edge. tokens come one by one. ") * 8


def write_tokenizer(folder: Path) -> None:
    """A byte-level BPE tokenizer (under 320 ids) trained here, saved as the Hugging Face
    files a builder leaves beside a model: no download, readable by ``tokenizers`` and by
    onnxruntime-genai."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([TEXT], trainer)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>", "model_max_length": 64, "clean_up_tokenization_spaces": False}))


def write_decoder_folder(folder: Path, kind: str = "int4", cfg: Config = Config()) -> Path:
    """``model.onnx``, ``genai_config.json`` and the tokenizer files in ``folder``: what
    onnxruntime-genai's builder leaves, for a decoder of ``kind``. Returns the model path."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(tiny_decoder(kind, cfg), folder / "model.onnx")
    config = genai_config(cfg)
    config["model"]["eos_token_id"] = config["model"]["bos_token_id"] = config["model"]["pad_token_id"] = 0
    (folder / "genai_config.json").write_text(json.dumps(config, indent=2))
    write_tokenizer(folder)
    return folder / "model.onnx"


def contrib_zoo(seed: int = 0) -> onnx.ModelProto:
    """One graph with a node of each contrib op the shape rules cover, fed from symbolic
    ``batch``/``seq``/``past`` inputs, every intermediate a graph value: a run of it checks
    each rule against onnxruntime."""
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    ms = "com.microsoft"

    def w(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.array(array, copy=True), name))
        return name

    def n(op: str, ins: list[str], outs: list[str], domain: str = ms, **attrs) -> None:
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] or op, domain=domain, **attrs))

    hidden, heads, kv_heads, hs = 32, 4, 2, 8
    f32 = np.float32
    n("SkipLayerNormalization", ["x", "skip", w("g", np.ones(hidden, f32)), w("beta", np.zeros(hidden, f32))],
      ["sln", "", "", "sln_sum"], epsilon=1e-5)
    n("SkipSimplifiedLayerNormalization", ["sln", "skip", w("g2", np.ones(hidden, f32))], ["ssln", "", "", "ssln_sum"],
      epsilon=1e-5)
    n("SimplifiedLayerNormalization", ["ssln", "g2"], ["simp"], domain="", axis=-1, epsilon=1e-5)
    n("FastGelu", ["simp", w("fg_bias", np.zeros(hidden, f32))], ["fastgelu"])
    n("BiasGelu", ["fastgelu", w("bg_bias", np.zeros(hidden, f32))], ["biasgelu"])
    n("QuickGelu", ["biasgelu"], ["quickgelu"], alpha=1.702)
    b, s, z = quantize_nbits(rng.standard_normal((hidden, 48)).astype(f32), 4, 16)
    n("MatMulNBits", ["quickgelu", w("nb_b", b), w("nb_s", s), w("nb_z", z)], ["nbits"], K=hidden, N=48, bits=4,
      block_size=16)
    n("DynamicQuantizeMatMul", ["quickgelu", w("dq_b", rng.integers(-8, 8, (hidden, 24)).astype(np.int8)),
                                 w("dq_s", np.array([0.05], f32))], ["dqmatmul"])
    n("MatMulInteger16", ["i16", w("i16_b", rng.integers(-8, 8, (6, 5)).astype(np.int16))], ["mmi16"])
    # attention: GQA with a past cache, MHA with a past cache, com.microsoft Attention with past
    q = rng.standard_normal((hidden, heads * hs)).astype(f32) * 0.1
    kv = rng.standard_normal((hidden, kv_heads * hs)).astype(f32) * 0.1
    n("MatMul", ["simp", w("wq", q)], ["q"], domain="")
    n("MatMul", ["simp", w("wk", kv)], ["k"], domain="")
    n("MatMul", ["simp", w("wv", kv)], ["v"], domain="")
    n("ReduceSum", ["attention_mask", w("one", np.array([1], np.int64))], ["mask_sum"], domain="", keepdims=0)
    n("Sub", ["mask_sum", w("one_s", np.array(1, np.int64))], ["seqlens64"], domain="")
    n("Cast", ["seqlens64"], ["seqlens"], domain="", to=T.INT32)
    n("Shape", ["attention_mask"], ["mask_shape"], domain="")
    n("Gather", ["mask_shape", w("idx1", np.array(1, np.int64))], ["total64"], domain="", axis=0)
    n("Cast", ["total64"], ["total"], domain="", to=T.INT32)
    n("GroupQueryAttention", ["q", "k", "v", "past_k", "past_v", "seqlens", "total"], ["gqa", "gqa_k", "gqa_v"],
      num_heads=heads, kv_num_heads=kv_heads)
    n("MatMul", ["simp", w("wk2", q)], ["k2"], domain="")
    n("MatMul", ["simp", w("wv2", q)], ["v2"], domain="")
    n("MultiHeadAttention", ["q", "k2", "v2", "", "", "", "mha_past_k", "mha_past_v"], ["mha", "mha_k", "mha_v"],
      num_heads=heads)
    n("Attention", ["simp", w("qkv_w", rng.standard_normal((hidden, 3 * hidden)).astype(f32) * 0.1),
                    w("qkv_b", np.zeros(3 * hidden, f32)), "", "attn_past"], ["attn", "attn_present"],
      num_heads=heads, unidirectional=1)
    n("RotaryEmbedding", ["q4", "pos", w("cos", np.ones((64, hs // 2), f32)), w("sin", np.zeros((64, hs // 2), f32))],
      ["rotary"])
    n("EmbedLayerNormalization", ["ids32", "", w("emb_word", rng.standard_normal((16, hidden)).astype(f32)),
                                  w("emb_pos", rng.standard_normal((64, hidden)).astype(f32)), "",
                                  w("emb_g", np.ones(hidden, f32)), w("emb_b", np.zeros(hidden, f32))],
      ["embed", "embed_mask", "embed_sum"], epsilon=1e-5)
    # block-quantized gather (an int4 embedding table packed into uint8) and blocked DequantizeLinear
    table, tscale, _ = quantize_nbits(rng.standard_normal((32, 16)).astype(f32), 4, 16)
    n("GatherBlockQuantized", [w("gbq_data", table.reshape(16, 16)), "ids", w("gbq_scale", tscale.reshape(16, 2))],
      ["gbq"], gather_axis=0, quantize_axis=1, block_size=16, bits=4)
    inits.append(helper.make_tensor("dql_x", T.INT4, [4, 32], rng.integers(-8, 8, 128).tolist()))
    n("DequantizeLinear", ["dql_x", "dql_s"], ["dql"], domain="", axis=1, block_size=16)
    # QLinear*: add, mul, concat, sigmoid, global average pool
    sc, zp = w("sc", np.array(0.05, f32)), w("zp", np.array(128, np.uint8))
    n("QLinearAdd", ["qa", sc, zp, "qb", sc, zp, sc, zp], ["qadd"])
    n("QLinearMul", ["qa", sc, zp, "qb", sc, zp, sc, zp], ["qmul"])
    n("QLinearConcat", [sc, zp, "qadd", sc, zp, "qmul", sc, zp], ["qconcat"], axis=1)
    n("QLinearSigmoid", ["qconcat", sc, zp, sc, zp], ["qsig"])
    n("QLinearGlobalAveragePool", ["qimg", sc, zp, sc, zp], ["qgap"], channels_last=0)
    inputs = [helper.make_tensor_value_info(name, t, dims) for name, t, dims in [
        ("x", T.FLOAT, ["batch", "seq", hidden]), ("skip", T.FLOAT, ["batch", "seq", hidden]),
        ("i16", T.INT16, ["batch", 6]), ("attention_mask", T.INT64, ["batch", "total_len"]),
        ("past_k", T.FLOAT, ["batch", kv_heads, "past", hs]), ("past_v", T.FLOAT, ["batch", kv_heads, "past", hs]),
        ("mha_past_k", T.FLOAT, ["batch", heads, "past", hs]), ("mha_past_v", T.FLOAT, ["batch", heads, "past", hs]),
        ("attn_past", T.FLOAT, [2, "batch", heads, "past", hidden // heads]),
        ("q4", T.FLOAT, ["batch", heads, "seq", hs]), ("pos", T.INT64, ["batch", "seq"]),
        ("ids", T.INT64, ["batch", "seq"]), ("ids32", T.INT32, ["batch", "seq"]), ("dql_s", T.FLOAT, [4, 2]),
        ("qa", T.UINT8, ["batch", "seq", 8]), ("qb", T.UINT8, ["batch", "seq", 8]),
        ("qimg", T.UINT8, ["batch", 3, "seq", 5])]]
    graph = helper.make_graph(nodes, "zoo", inputs, [helper.make_tensor_value_info("qgap", T.UINT8, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ms, 1)])
    model.ir_version = 10
    return model
