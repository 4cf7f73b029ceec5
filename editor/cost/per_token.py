"""What a decoder costs per token: prefill and decode, MACs and bytes read, KV-cache growth.

A decoder's whole-model figures are formulas in ``sequence_length`` and the past and total
lengths; what its user wants are the two regimes of generation (batch 1):

- **prefill**: the prompt's ``P`` tokens in one step over an empty cache (compute-bound:
  MACs per prompt token);
- **decode**: one new token with ``C`` tokens already cached (memory-bound: every weight is
  read once per token, plus the cache: ``C`` x the KV bytes per token).

Both are :func:`editor.cost.model_cost` at the dims of that step, so they follow the same
conventions (the attention ops' MACs grow with the KV length; MatMulNBits counts K x N per
row with its weights at their bit width).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import onnx

from editor.cost.report import model_cost
from editor.decoder import DecoderLayout

__all__ = ["TokenCost", "step_dims", "token_cost"]


@dataclass(frozen=True)
class TokenCost:
    prompt: int
    context: int
    prefill_macs: int | None
    decode_macs: int | None
    weight_bytes: int
    kv_bytes_per_token: int | None

    @property
    def decode_bytes(self) -> int | None:
        """Bytes one decode step reads: the weights and the cached keys and values."""
        if self.kv_bytes_per_token is None:
            return None
        return self.weight_bytes + self.kv_bytes_per_token * self.context

    def to_json(self) -> dict:
        return {"prompt_tokens": self.prompt, "context_tokens": self.context,
                "prefill_macs": self.prefill_macs,
                "prefill_macs_per_token": None if self.prefill_macs is None else self.prefill_macs // max(1, self.prompt),
                "decode_macs_per_token": self.decode_macs, "weight_bytes": self.weight_bytes,
                "decode_bytes_per_token": self.decode_bytes, "kv_cache_bytes_per_token": self.kv_bytes_per_token}


def step_dims(layout: DecoderLayout, new: int, past: int) -> dict[str, int]:
    """The dims of one generation step: ``new`` tokens over ``past`` cached ones (batch 1)."""
    dims = {}
    for name, value in ((layout.batch_dim, 1), (layout.sequence_dim, new), (layout.past_dim, past),
                        (layout.total_dim, past + new)):
        if name:
            dims[name] = value
    for c in layout.caches:  # heads and head size declared by name (``kv_cache_dim``)
        for axis, size in c.required.items():
            if isinstance(c.shape[axis], str):
                dims.setdefault(c.shape[axis], size)
    return dims


def token_cost(model: onnx.ModelProto, layout: DecoderLayout, *, prompt: int = 128, context: int = 512,
               dims: Mapping[str, int] | None = None) -> TokenCost:
    """Prefill of ``prompt`` tokens and one decode step at ``context`` cached tokens."""
    extra = dict(dims or {})
    prefill = model_cost(model, {**extra, **step_dims(layout, prompt, 0)})
    decode = model_cost(model, {**extra, **step_dims(layout, 1, context)})
    return TokenCost(prompt, context, _int(prefill.evaluate(prefill.macs) if not prefill.unknown_nodes else None),
                     _int(decode.evaluate(decode.macs) if not decode.unknown_nodes else None),
                     decode.weight_bytes, layout.kv_bytes_per_token())


def _int(value: int | None) -> int | None:
    return None if value is None else int(value)
