"""What makes a model an autoregressive decoder: its token, mask and KV-cache inputs.

A decoder exported by onnxruntime-genai's builder, Olive or optimum takes ``input_ids``
``[batch, sequence]``, an ``attention_mask`` ``[batch, total]`` (past + new), often
``position_ids``, and one past key and one past value per layer
(``past_key_values.N.key`` ``[batch, kv_heads, past, head_size]``), and returns ``logits``
and the ``present.N.key``/``.value`` caches of length ``total``. Runs, costs and generation
all need to know which input is which and which named dims are the past, the new and the
total lengths, so they are found once, here, from (in this order):

1. ``genai_config.json`` beside the model (onnxruntime-genai's own description: input and
   output names, heads, head size, vocabulary);
2. the attention ops themselves: the graph inputs a ``GroupQueryAttention``,
   ``MultiHeadAttention``, ``Attention`` (com.microsoft or ai.onnx) reads as its past key and
   value, with their ``kv_num_heads``/``num_heads`` attributes;
3. the names exporters use (``past_key_values.N.key``, ``past_key_N``, ``past.N.value`` ...),
   for decoders of standard ops whose cache feeds a Concat.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import onnx

__all__ = ["CacheInput", "DecoderLayout", "find_layout", "read_genai_config"]

#: (domain, op) -> (past key slot, past value slot, sequence axis of the past tensors)
PAST_SLOTS: dict[tuple[str, str], tuple[int, int | None, int]] = {
    ("com.microsoft", "GroupQueryAttention"): (3, 4, 2),
    ("com.microsoft", "MultiHeadAttention"): (6, 7, 2),
    ("com.microsoft", "DecoderMaskedMultiHeadAttention"): (5, 6, 2),
    ("com.microsoft", "Attention"): (4, None, 3),  # one past: [2, batch, heads, past, head_size]
    ("", "Attention"): (4, 5, 2),
}
_PAST_NAME = re.compile(r"past[._]?(?:key[._]?values?)?[._](\d+)[._](key|value)|past[._](key|value)[._](\d+)", re.I)
_MASK = re.compile(r"attention_mask|attn_mask", re.I)
_IDS = re.compile(r"^(input_ids|tokens?|ids)$", re.I)
_POSITIONS = re.compile(r"position_ids|positions", re.I)


@dataclass(frozen=True)
class CacheInput:
    """One past-cache input and the present output that carries it forward."""

    name: str
    layer: int
    kind: str  # "key", "value" or "kv" (com.microsoft Attention's stacked past)
    present: str | None
    elem_type: int
    #: the declared shape: ints, dim names, None for unknown
    shape: tuple[int | str | None, ...]
    #: the axis that grows by one per generated token
    seq_axis: int
    #: what the attention op says the other axes must be, by axis (heads, head size)
    required: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class DecoderLayout:
    """A decoder's inputs and the dim names a run must keep consistent."""

    caches: tuple[CacheInput, ...]
    input_ids: str | None = None
    attention_mask: str | None = None
    position_ids: str | None = None
    logits: str | None = None
    batch_dim: str | None = None
    #: the new tokens of one step (``sequence_length``)
    sequence_dim: str | None = None
    #: the cached tokens (``past_sequence_length``)
    past_dim: str | None = None
    #: past + new (``total_sequence_length``: the attention mask's length)
    total_dim: str | None = None
    vocab_size: int | None = None
    #: where the facts came from: "genai_config.json", "attention ops" or "input names"
    source: str = ""
    #: genai_config.json as read (empty without one)
    config: dict = field(default_factory=dict)

    @property
    def layers(self) -> int:
        return len({c.layer for c in self.caches})

    def kv_bytes_per_token(self, batch: int = 1) -> int | None:
        """Bytes the cache grows by per token (all layers, keys and values)."""
        from editor.cost.report import dtype_bits

        total = 0
        for c in self.caches:
            per = 1
            batch_axis = 1 if c.kind == "kv" else 0
            for axis, d in enumerate(c.shape):
                if axis == c.seq_axis:
                    continue
                size = c.required.get(axis, d if isinstance(d, int) else None)
                if size is None and axis == batch_axis:
                    size = batch
                if size is None:
                    return None
                per *= size
            total += per * dtype_bits(c.elem_type) // 8
        return total


def read_genai_config(folder: Path) -> dict:
    """``genai_config.json`` of ``folder`` ({} when absent or unreadable)."""
    path = folder / "genai_config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def find_layout(model: onnx.ModelProto, folder: Path | None = None) -> DecoderLayout | None:
    """The decoder layout of ``model`` (``folder``: where its genai_config.json may be),
    or None when it has no KV-cache inputs."""
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    inputs = {vi.name: vi for vi in graph.input if vi.name not in inits}
    outputs = [vi.name for vi in graph.output]
    config = read_genai_config(folder) if folder is not None else {}
    decoder = config.get("model", {}).get("decoder", {}) if config else {}
    found, source = _from_config(decoder, inputs, outputs), "genai_config.json"
    if not found:
        found, source = _from_attention(graph, inputs, outputs), "attention ops"
    if not found:
        found, source = _from_names(inputs, outputs), "input names"
    if not found:
        return None
    widths = _query_widths(model, found)
    caches = tuple(_required(c, model, decoder, widths) for c in found)
    names = list(inputs)
    cfg_inputs = decoder.get("inputs", {}) if decoder else {}
    ids = _pick(names, cfg_inputs.get("input_ids"), _IDS)
    mask = _pick(names, cfg_inputs.get("attention_mask"), _MASK)
    positions = _pick(names, cfg_inputs.get("position_ids"), _POSITIONS)
    logits = decoder.get("outputs", {}).get("logits") if decoder else None
    if logits not in outputs:
        logits = next((o for o in outputs if "logits" in o.lower()), outputs[0] if outputs else None)
    dims = _dim_names(inputs, ids, mask, caches)
    vocab = config.get("model", {}).get("vocab_size") if config else None
    if vocab is None and logits is not None:
        vocab = _last_dim(next((vi for vi in graph.output if vi.name == logits), None))
    return DecoderLayout(caches, ids, mask, positions, logits, *dims, vocab_size=vocab, source=source,
                         config=config)


def _pick(names: list[str], configured: str | None, pattern: re.Pattern[str]) -> str | None:
    if configured in names:
        return configured
    return next((n for n in names if pattern.search(n)), None)


def _shape(vi: onnx.ValueInfoProto) -> tuple[int | str | None, ...]:
    t = vi.type.tensor_type
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)


def _last_dim(vi: onnx.ValueInfoProto | None) -> int | None:
    if vi is None:
        return None
    shape = _shape(vi)
    return shape[-1] if shape and isinstance(shape[-1], int) else None


def _cache(vi: onnx.ValueInfoProto, layer: int, kind: str, present: str | None, seq_axis: int) -> CacheInput:
    return CacheInput(vi.name, layer, kind, present, vi.type.tensor_type.elem_type, _shape(vi), seq_axis)


def _present_for(name: str, outputs: list[str]) -> str | None:
    """The output that carries ``name`` forward (``past_key_values.0.key`` -> ``present.0.key``)."""
    for candidate in (name.replace("past_key_values", "present"), name.replace("past", "present")):
        if candidate in outputs and candidate != name:
            return candidate
    return None


def _from_config(decoder: dict, inputs: dict, outputs: list[str]) -> list[CacheInput]:
    cfg_in, cfg_out = decoder.get("inputs", {}), decoder.get("outputs", {})
    key_pattern, value_pattern = cfg_in.get("past_key_names"), cfg_in.get("past_value_names")
    if not key_pattern or not value_pattern:
        return []
    out = []
    for layer in range(int(decoder.get("num_hidden_layers", 0)) or 1024):
        key, value = _fill(key_pattern, layer), _fill(value_pattern, layer)
        if key not in inputs or value not in inputs:
            break
        pk = _fill(cfg_out.get("present_key_names", ""), layer) or None
        pv = _fill(cfg_out.get("present_value_names", ""), layer) or None
        out.append(_cache(inputs[key], layer, "key", pk if pk in outputs else None, 2))
        out.append(_cache(inputs[value], layer, "value", pv if pv in outputs else None, 2))
    return out


def _fill(pattern: str, layer: int) -> str:
    return pattern % layer if "%d" in pattern else pattern


def _from_attention(graph: onnx.GraphProto, inputs: dict, outputs: list[str]) -> list[CacheInput]:
    out: list[CacheInput] = []
    layer = 0
    for node in graph.node:
        slots = PAST_SLOTS.get(("" if node.domain == "ai.onnx" else node.domain, node.op_type))
        if slots is None:
            continue
        key_slot, value_slot, seq_axis = slots
        names = list(node.input)
        key = names[key_slot] if len(names) > key_slot else ""
        if key not in inputs:
            continue
        present = list(node.output)
        if value_slot is None:  # [2, batch, heads, past, head_size]: present is output 1
            out.append(_cache(inputs[key], layer, "kv", present[1] if len(present) > 1 else None, seq_axis))
        else:
            value = names[value_slot] if len(names) > value_slot else ""
            out.append(_cache(inputs[key], layer, "key", present[1] if len(present) > 1 else None, seq_axis))
            if value in inputs:
                out.append(_cache(inputs[value], layer, "value", present[2] if len(present) > 2 else None,
                                  seq_axis))
        layer += 1
    return out


def _from_names(inputs: dict, outputs: list[str]) -> list[CacheInput]:
    out = []
    for name, vi in inputs.items():
        m = _PAST_NAME.search(name)
        if m is None or len(_shape(vi)) != 4:
            continue
        layer = int(m.group(1) or m.group(4))
        kind = (m.group(2) or m.group(3)).lower()
        out.append(_cache(vi, layer, kind, _present_for(name, outputs), 2))
    return sorted(out, key=lambda c: (c.layer, c.kind))


def _required(c: CacheInput, model: onnx.ModelProto, decoder: dict, widths: dict[str, int]) -> CacheInput:
    """The heads and head size the attention op will check, for axes declared by name
    (onnxruntime-genai's builder declares the head size as ``kv_cache_dim``)."""
    heads_axis, size_axis = (2, 4) if c.kind == "kv" else (1, 3)
    named = [a for a in (heads_axis, size_axis) if a < len(c.shape) and not isinstance(c.shape[a], int)]
    if not named:
        return c
    heads, size = decoder.get("num_key_value_heads"), decoder.get("head_size")
    reader = next((n for n in model.graph.node if c.name in n.input), None)
    if reader is not None and (heads is None or size is None):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in reader.attribute}
        q_heads = int(attrs.get("num_heads", 0) or 0)
        kv_heads = int(attrs.get("kv_num_heads", 0) or 0) or q_heads
        heads = heads or kv_heads or None
        width = widths.get(reader.input[0]) if reader.input else None
        packed = reader.op_type == "GroupQueryAttention" and (len(reader.input) < 2 or not reader.input[1])
        if size is None and width and q_heads:
            size = width // (q_heads + 2 * kv_heads) if packed else width // q_heads
    required = {a: int(v) for a, v in ((heads_axis, heads), (size_axis, size)) if a in named and v}
    return CacheInput(c.name, c.layer, c.kind, c.present, c.elem_type, c.shape, c.seq_axis, required)


def _query_widths(model: onnx.ModelProto, caches: list[CacheInput]) -> dict[str, int]:
    """The last dim of each attention op's query, from the shape engine (only when a cache
    declares its heads or head size by name: the engine reads the whole graph)."""
    if all(isinstance(d, int) for c in caches for a, d in enumerate(c.shape) if a != c.seq_axis and a > 0):
        return {}
    from editor.shapes import infer_model

    table = infer_model(model)
    out = {}
    for node in model.graph.node:
        if ("" if node.domain == "ai.onnx" else node.domain, node.op_type) in PAST_SLOTS and node.input:
            dims = table.get(node.input[0]).dims
            if dims and isinstance(dims[-1], int):
                out[node.input[0]] = dims[-1]
    return out


def _dim_names(inputs: dict, ids: str | None, mask: str | None,
               caches: tuple[CacheInput, ...]) -> tuple[str | None, str | None, str | None, str | None]:
    """(batch, sequence, past, total) dim names as the inputs declare them."""
    batch = sequence = past = total = None
    if ids is not None:
        shape = _shape(inputs[ids])
        batch = shape[0] if shape and isinstance(shape[0], str) else None
        sequence = shape[1] if len(shape) > 1 and isinstance(shape[1], str) else None
    if mask is not None:
        shape = _shape(inputs[mask])
        total = shape[-1] if shape and isinstance(shape[-1], str) else None
        batch = batch or (shape[0] if shape and isinstance(shape[0], str) else None)
    for c in caches:
        d = c.shape[c.seq_axis] if len(c.shape) > c.seq_axis else None
        if isinstance(d, str):
            past = d
            break
    return batch, sequence, past, total
