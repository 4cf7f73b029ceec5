"""Benchmark fixtures for the drawing of big and unusual models (issue 30): built, never downloaded.

Two torch exports that stand in for real models the layout must read well (run with a
Python that has torch, onnx and onnxruntime: torch is a benchmark-only peer, never a
dependency of the app; see README "Measured"):

* ``tts_like_int8.onnx``: a VITS/Piper-style text encoder (relative-position attention
  with its shape arithmetic, a length mask read by every layer, channel-first LayerNorm,
  conv FFNs) and a duration predictor with the path expansion, all under one ``encoder``
  scope, exported with dynamic lengths, quantized to int8 (``quantize_dynamic``) and saved
  after onnxruntime's extended optimizations, so it carries com.microsoft fused ops
  (``DynamicQuantizeMatMul``, ``MatMulIntegerToFloat``, ``FusedConv`` ...) like a shipped
  int8 TTS model. About 3.6k nodes.
* ``reused_module.onnx``: a transformer whose one ``mol_layer`` module is called 7 times
  with a per-call ``norms.k`` between calls: the 7 calls share (and interleave) one name
  scope, as in a reaction-mapping transformer exported from torch.

    /path/to/torch-venv/bin/python tests/benchmarks/make_layout_fixtures.py [--out /tmp/onnx-large]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


# --------------------------------------------------------------------------- TTS-like

class ChannelNorm(nn.Module):
    """LayerNorm over channels of a [B, C, T] tensor (VITS's ``LayerNorm``)."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(c)

    def forward(self, x):
        return self.norm(x.transpose(1, -1)).transpose(1, -1)


class RelAttention(nn.Module):
    """VITS's multi-head attention with windowed relative-position keys and values."""

    def __init__(self, c: int, heads: int, window: int = 4) -> None:
        super().__init__()
        self.h, self.k, self.window = heads, c // heads, window
        self.q, self.kk, self.v, self.o = (nn.Conv1d(c, c, 1) for _ in range(4))
        self.emb_k = nn.Parameter(torch.randn(1, 2 * window + 1, self.k) * self.k ** -0.5)
        self.emb_v = nn.Parameter(torch.randn(1, 2 * window + 1, self.k) * self.k ** -0.5)

    def rel_emb(self, emb, length):
        length = torch.as_tensor(length)
        pad = torch.clamp(length - (self.window + 1), min=0)
        start = torch.clamp((self.window + 1) - length, min=0)
        padded = F.pad(emb, [0, 0, pad, pad, 0, 0])
        return padded[:, start:start + 2 * length - 1]

    @staticmethod
    def rel_to_abs(x):
        b, h, length, _ = x.size()
        x = F.pad(x, [0, 1, 0, 0, 0, 0, 0, 0])
        x = x.view(b, h, length * 2 * length)
        x = F.pad(x, [0, length - 1, 0, 0, 0, 0])
        return x.view(b, h, length + 1, 2 * length - 1)[:, :, :length, length - 1:]

    @staticmethod
    def abs_to_rel(x):
        b, h, length, _ = x.size()
        x = F.pad(x, [0, length - 1, 0, 0, 0, 0, 0, 0])
        x = x.view(b, h, length ** 2 + length * (length - 1))
        x = F.pad(x, [length, 0, 0, 0, 0, 0])
        return x.view(b, h, length, 2 * length)[:, :, :, 1:]

    def forward(self, x, mask, b, t):
        # b, t come from the model's input (computed once, read by every layer: hubs)
        q, k, v = self.q(x), self.kk(x), self.v(x)
        d = self.h * self.k
        q = q.view(b, self.h, self.k, t).transpose(2, 3)
        k = k.view(b, self.h, self.k, t).transpose(2, 3)
        v = v.view(b, self.h, self.k, t).transpose(2, 3)
        scores = torch.matmul(q / math.sqrt(self.k), k.transpose(-2, -1))
        rk = self.rel_emb(self.emb_k, t)
        scores = scores + self.rel_to_abs(torch.matmul(q / math.sqrt(self.k), rk.unsqueeze(0).transpose(-2, -1)))
        scores = scores.masked_fill(mask == 0, -1e4)
        p = F.softmax(scores, dim=-1)
        out = torch.matmul(p, v)
        out = out + torch.matmul(self.abs_to_rel(p), self.rel_emb(self.emb_v, t).unsqueeze(0))
        out = out.transpose(2, 3).contiguous().view(b, d, t)
        return self.o(out)


class FFN(nn.Module):
    def __init__(self, c: int, hidden: int, kernel: int = 3) -> None:
        super().__init__()
        self.c1 = nn.Conv1d(c, hidden, kernel, padding=kernel // 2)
        self.c2 = nn.Conv1d(hidden, c, kernel, padding=kernel // 2)

    def forward(self, x, mask):
        x = torch.relu(self.c1(x * mask))
        return self.c2(x * mask) * mask


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, c: int, heads: int, layers: int) -> None:
        super().__init__()
        self.c = c
        self.emb = nn.Embedding(vocab, c)
        self.attn = nn.ModuleList(RelAttention(c, heads) for _ in range(layers))
        self.norm1 = nn.ModuleList(ChannelNorm(c) for _ in range(layers))
        self.ffn = nn.ModuleList(FFN(c, 4 * c) for _ in range(layers))
        self.norm2 = nn.ModuleList(ChannelNorm(c) for _ in range(layers))
        self.proj = nn.Conv1d(c, 2 * c, 1)

    def forward(self, tokens, lengths):
        b, t = tokens.shape
        x = self.emb(tokens) * math.sqrt(self.c)
        x = x.transpose(1, -1)
        x_mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(1).to(x.dtype)
        attn_mask = x_mask.unsqueeze(2) * x_mask.unsqueeze(-1)
        x = x * x_mask
        for attn, n1, ffn, n2 in zip(self.attn, self.norm1, self.ffn, self.norm2):
            x = n1(x + attn(x, attn_mask, b, t))
            x = n2(x + ffn(x, x_mask))
        stats = self.proj(x) * x_mask
        m, logs = torch.split(stats, self.c, dim=1)
        return x, m, logs, x_mask


class DurationPredictor(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.c1 = nn.Conv1d(c, c, 3, padding=1)
        self.n1 = ChannelNorm(c)
        self.c2 = nn.Conv1d(c, c, 3, padding=1)
        self.n2 = ChannelNorm(c)
        self.proj = nn.Conv1d(c, 1, 1)

    def forward(self, x, mask):
        x = self.n1(torch.relu(self.c1(x * mask)))
        x = self.n2(torch.relu(self.c2(x * mask)))
        return self.proj(x * mask) * mask


class Encoder(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.text = TextEncoder(120, 192, 2, layers)
        self.dp = DurationPredictor(192)

    def forward(self, tokens, lengths, scales):
        x, m, logs, x_mask = self.text(tokens, lengths)
        logw = self.dp(x, x_mask)
        w = torch.exp(logw) * x_mask * scales[1]
        w_ceil = torch.ceil(w)
        y_len = torch.clamp_min(torch.sum(w_ceil, [1, 2]), 1).long()
        t_y = y_len.max()
        y_mask = (torch.arange(t_y).unsqueeze(0) < y_len.unsqueeze(1)).unsqueeze(1).to(x_mask.dtype)
        cum = torch.cumsum(w_ceil.squeeze(1), -1)
        path = (torch.arange(t_y).view(1, 1, -1) < cum.unsqueeze(-1)).to(x.dtype)
        path = path - F.pad(path, [0, 0, 1, 0])[:, :-1]
        path = path * x_mask.transpose(1, 2) * y_mask
        m_p = torch.matmul(path.transpose(1, 2), m.transpose(1, 2)).transpose(1, 2)
        logs_p = torch.matmul(path.transpose(1, 2), logs.transpose(1, 2)).transpose(1, 2)
        z = m_p + torch.randn_like(m_p) * torch.exp(logs_p) * scales[0]
        return z * y_mask, y_mask


class TTS(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.encoder = Encoder(layers)
        self.post = nn.Conv1d(192, 80, 1)

    def forward(self, tokens, lengths, scales):
        z, y_mask = self.encoder(tokens, lengths, scales)
        return torch.tanh(self.post(z)) * y_mask


# --------------------------------------------------------------------------- reused module

class SelfAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.h = heads
        self.query, self.key, self.value, self.dense = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, pad):
        b, t, d = x.shape
        q, k, v = (m(x).view(b, t, self.h, d // self.h).transpose(1, 2) for m in (self.query, self.key, self.value))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.h)
        scores = scores + pad[:, None, None, :] * -1e4
        out = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(b, t, d)
        return self.dense(out)


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.attention = SelfAttention(d, heads)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)

    def forward(self, x, pad):
        x = self.ln(x + self.attention(x, pad))
        return x + self.ffn(x)


class ReusedModule(nn.Module):
    """One ``mol_layer`` called ``calls`` times, a ``norms.k`` of its own between the calls."""

    def __init__(self, d: int = 128, heads: int = 4, calls: int = 7) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(600, d)
        self.mol_layer = Layer(d, heads)
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(calls))
        self.head = nn.Linear(d, 2)

    def forward(self, ids, mask):
        x = self.embeddings(ids)
        pad = (mask == 0).to(x.dtype)
        for norm in self.norms:
            x = norm(self.mol_layer(x, pad))
        return self.head(x)


# --------------------------------------------------------------------------- export

def _export(model: nn.Module, args: tuple, path: str, names: list[str], outputs: list[str], dynamic: dict) -> None:
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=names, output_names=outputs, dynamic_axes=dynamic,
                          opset_version=17, dynamo=False)


def make_tts(out: str, layers: int = 24) -> str:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = os.path.join(out, "tts_like_int8.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = os.path.join(tmp, "fp32.onnx")
        int8 = os.path.join(tmp, "int8.onnx")
        tokens = torch.randint(0, 120, (1, 37))
        _export(TTS(layers), (tokens, torch.tensor([37]), torch.tensor([0.667, 1.0, 0.8])), fp32,
                ["input", "input_lengths", "scales"], ["output"],
                {"input": {0: "batch", 1: "phonemes"}, "input_lengths": {0: "batch"},
                 "output": {0: "batch", 2: "time"}})
        quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = path
        ort.InferenceSession(int8, so, providers=["CPUExecutionProvider"])
    _one_scope(path, "/encoder/")
    return path


def _one_scope(path: str, scope: str) -> None:
    """Name every node under ``scope`` ``<scope><op>_<k>``: the shipped int8 TTS model this
    stands in for has one ``encoder`` scope of 3,449 nodes and no scopes inside it."""
    import onnx

    m = onnx.load(path)
    for k, node in enumerate(m.graph.node):
        if node.name.startswith(scope):
            node.name = f"{scope}{node.op_type}_{k}"
    onnx.save(m, path)


def make_reused(out: str) -> str:
    path = os.path.join(out, "reused_module.onnx")
    ids = torch.randint(0, 600, (1, 40))
    _export(ReusedModule(), (ids, torch.ones(1, 40, dtype=torch.long)), path, ["input_ids", "attention_mask"],
            ["logits"], {"input_ids": {0: "batch", 1: "atoms"}, "attention_mask": {0: "batch", 1: "atoms"}})
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/onnx-large")
    ap.add_argument("--layers", type=int, default=24, help="text encoder layers of the TTS-like model")
    ap.add_argument("--only", default="", help="tts,reused (default: both)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    import onnx

    only = a.only.split(",") if a.only else ["tts", "reused"]
    made = ([make_tts(a.out, a.layers)] if "tts" in only else []) + ([make_reused(a.out)] if "reused" in only else [])
    for p in made:
        m = onnx.load(p, load_external_data=False)
        doms = sorted({n.domain for n in m.graph.node if n.domain})
        print(f"{os.path.basename(p)}: {len(m.graph.node)} nodes, domains {doms}")


if __name__ == "__main__":
    main()
