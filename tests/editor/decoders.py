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

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper


@dataclass(frozen=True)
class Config:
    vocab: int = 96
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
        out = f"{scope}/output_0"
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
        past_dims = ["batch_size", cfg.kv_heads, "past_sequence_length", hs]
        present_dims = ["batch_size", cfg.kv_heads, "total_sequence_length", hs]
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
