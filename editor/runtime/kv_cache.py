"""Inputs a decoder can run on: an empty (or chosen-length) KV cache and a mask that matches.

Random inputs of independent guesses break a decoder: ``past_sequence_length`` and
``total_sequence_length`` both guessed 16 contradict each other (total = past + new), and a
head-size dim declared by name and guessed 1 is refused by the attention op
("``past_key`` dimension 3 should match the packed KV head dimension"). So for a model with
KV-cache inputs (:func:`editor.decoder.find_layout`) :func:`cache_plan` fixes, unless the
user gave them: the past length (``past_length``, 0 by default: an empty cache, the first
step of generation), the total length as past + new, the heads and head size the attention
ops require; and it gives the values that must agree with them: an attention mask of ones
over the total length, position ids counting from the past length. Input ids stay random
inside the vocabulary (:mod:`editor.runtime.input_roles` bounds the Gather that embeds them).

:func:`editor.runtime.inputs.make_inputs` calls it, so the CLI's ``run --random``, the Run
dock, compare and reduce all get the same decoder inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from editor.decoder import DecoderLayout, find_layout
from editor.runtime.inputs import guess_dim

__all__ = ["CachePlan", "cache_plan", "PAST_LENGTH_DIM"]

#: the name under which ``--dim`` chooses the past length of every cache input
PAST_LENGTH_DIM = "past_sequence_length"


@dataclass(frozen=True)
class CachePlan:
    """What a decoder's run must agree on."""

    layout: DecoderLayout
    #: named dims (and ``NAME[AXIS]`` positional ones) to use for the inputs' shapes
    dims: dict[str, int]
    #: input name -> how to fill it ("ones", "positions"): values that must match the dims
    fills: dict[str, str] = field(default_factory=dict)
    #: what was decided, for the run's report ("past_sequence_length = 0 (empty KV cache)")
    notes: tuple[str, ...] = ()

    def value(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The value of a filled input at its resolved ``shape``."""
        how = self.fills[name]
        if how == "ones":
            return np.ones(shape, dtype=dtype)
        past = self.past_length
        steps = shape[-1] if shape else 1
        return np.broadcast_to(np.arange(past, past + steps, dtype=dtype), shape).copy()

    @property
    def past_length(self) -> int:
        d = self.layout.past_dim
        return int(self.dims.get(d, 0)) if d else 0


def cache_plan(model: onnx.ModelProto, dims: Mapping[str, int], user: Mapping[str, int] | None = None,
               folder: Path | None = None, past_length: int | None = None) -> CachePlan | None:
    """The plan for ``model`` (None when it is no decoder). ``dims``: the values chosen so
    far (guesses included); ``user``: the ones the user gave, which always win."""
    layout = find_layout(model, folder)
    if layout is None:
        return None
    user = dict(user or {})
    out: dict[str, int] = {}
    notes: list[str] = []
    past = past_length if past_length is not None else user.get(layout.past_dim or PAST_LENGTH_DIM, 0)
    if layout.past_dim and layout.past_dim not in user:
        out[layout.past_dim] = past
        notes.append(f"{layout.past_dim} = {past}" + (" (empty KV cache)" if past == 0 else ""))
    for c in layout.caches:
        if layout.past_dim is None and not isinstance(c.shape[c.seq_axis], int):
            out[f"{c.name}[{c.seq_axis}]"] = past  # an unnamed past axis
        for axis, size in c.required.items():
            d = c.shape[axis]
            key = d if isinstance(d, str) else f"{c.name}[{axis}]"
            if key not in user:
                out[key] = size
    new = 1
    if layout.sequence_dim:
        new = int(dims.get(layout.sequence_dim, guess_dim(layout.sequence_dim)))
        out.setdefault(layout.sequence_dim, new)
    if layout.total_dim and layout.total_dim not in user and layout.total_dim != layout.sequence_dim:
        out[layout.total_dim] = past + new
        notes.append(f"{layout.total_dim} = {out[layout.total_dim]} (past + new)")
    fills = {}
    if layout.attention_mask:
        fills[layout.attention_mask] = "ones"
    if layout.position_ids:
        fills[layout.position_ids] = "positions"
    return CachePlan(layout, out, fills, tuple(notes))
