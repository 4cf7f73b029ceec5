"""Inputs a decoder can run on: an empty (or chosen-length) KV cache and a mask that matches.

Independent guesses break a decoder: ``past_sequence_length`` and ``total_sequence_length``
both guessed 16 contradict each other (total = past + new), and a head-size dim declared
by name (onnxruntime-genai's builder writes ``kv_cache_dim``) and guessed 1 is refused by
the attention op ("``past_key`` dimension 3 should match the packed KV head dimension").
For a model with KV-cache inputs (:func:`editor.decoder.find_layout`):

- a dim rule (:func:`editor.runtime.input_dims.register_dim_rule`) gives the past length 0
  (an empty cache: the first step of generation) and the heads and head size the attention
  ops require (their ``kv_num_heads``/``num_heads`` attributes, the query's width);
- :func:`settle` then makes the total length past + new, whatever the user chose for
  either, and says which inputs must agree with the lengths: an attention mask of ones over
  the total, position ids counting from the past length.

A user's ``--dim`` always wins; ``--dim past_sequence_length=N`` gives a cache of N tokens.
:func:`editor.runtime.input_plan.plan_inputs` calls both, so the CLI's ``run --random``, the
Run dock, compare and reduce all get the same decoder inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import onnx

from editor.decoder import DecoderLayout, find_layout
from editor.runtime.input_dims import DimChoice, DimPlan, register_dim_rule

__all__ = ["CachePlan", "settle"]


@dataclass(frozen=True)
class CachePlan:
    """What a decoder's run must agree on."""

    layout: DecoderLayout
    past_length: int
    #: input name -> how to fill it ("ones", "positions"): values that must match the lengths
    fills: dict[str, str] = field(default_factory=dict)

    def value(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The value of a filled input at its resolved ``shape``."""
        if self.fills[name] == "ones":
            return np.ones(shape, dtype=dtype)
        steps = shape[-1] if shape else 1
        return np.broadcast_to(np.arange(self.past_length, self.past_length + steps, dtype=dtype), shape).copy()

    def how(self, name: str) -> str:
        if self.fills[name] == "ones":
            return "ones: the attention mask over past + new tokens"
        return f"positions {self.past_length}, {self.past_length + 1}, ...: after the cached tokens"


def _cache_dims(model: onnx.ModelProto, open_dims: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[int, str]]:
    """The dim rule: an empty cache, and the heads and head size the attention ops check."""
    layout = find_layout(model)
    if layout is None:
        return {}
    out: dict[str, tuple[int, str]] = {}
    by_use = {use: key for key, uses in open_dims.items() for use in uses}
    for c in layout.caches:
        past = by_use.get(f"{c.name}[{c.seq_axis}]")
        if past is not None:
            out[past] = (0, "an empty KV cache (--dim it for a cache of that many tokens)")
        for axis, size in c.required.items():
            key = by_use.get(f"{c.name}[{axis}]")
            if key is not None:
                what = "heads" if axis == (2 if c.kind == "kv" else 1) else "head size"
                out[key] = (size, f"the KV {what} the attention op requires")
    return out


register_dim_rule(_cache_dims)


def settle(model: onnx.ModelProto, plan: DimPlan, user: Mapping[str, int] | None = None) -> CachePlan | None:
    """Make ``plan``'s total length past + new (unless the user gave it) and return what the
    decoder's mask and positions must be (None when ``model`` is no decoder)."""
    layout = find_layout(model)
    if layout is None:
        return None
    user = dict(user or {})
    choices = plan.choices
    past_choice = choices.get(layout.past_dim) if layout.past_dim else None
    past = past_choice.value if past_choice is not None else 0
    new_choice = choices.get(layout.sequence_dim) if layout.sequence_dim else None
    total = choices.get(layout.total_dim) if layout.total_dim else None
    if total is not None and new_choice is not None and layout.total_dim not in user \
            and layout.total_dim != layout.sequence_dim:
        choices[layout.total_dim] = DimChoice(total.key, past + new_choice.value, "rule", total.role,
                                              f"past + new: {past} cached + {new_choice.value} new tokens", total.uses)
    fills = {}
    if layout.attention_mask:
        fills[layout.attention_mask] = "ones"
    if layout.position_ids:
        fills[layout.position_ids] = "positions"
    return CachePlan(layout, past, fills)
