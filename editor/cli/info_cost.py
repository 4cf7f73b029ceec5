"""``onnx-studio info MODEL --cost``: what the model costs, as text or JSON.

The text form: totals (MACs, FLOPs, parameters, weight bytes by type, peak activation
memory), the dims the figures depend on, then the nodes with the most MACs. Figures are
numbers when every dim is fixed (``--dim NAME=VALUE``) and formulas otherwise. A decoder
(KV-cache inputs) adds its per-token figures: prefill and decode MACs, bytes read per new
token, KV-cache bytes per token (:mod:`editor.cost.per_token`).
"""

from __future__ import annotations

import onnx

from editor.cost import ModelCost, model_cost
from editor.cost.per_token import TokenCost
from editor.errors import StudioError
from editor.shapes import to_text

__all__ = ["parse_dims", "cost_of", "format_cost", "format_token_cost"]


def parse_dims(items: list[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise StudioError(f"--dim {item!r} is not NAME=VALUE")
        try:
            dims[name] = int(value)
        except ValueError:
            raise StudioError(f"--dim {item!r}: {value!r} is not a whole number") from None
        if dims[name] < 0:
            raise StudioError(f"--dim {item!r}: a dimension cannot be negative")
    return dims


def cost_of(model: onnx.ModelProto, dims: dict[str, int]) -> ModelCost:
    cost = model_cost(model, dims)
    known = set(cost.free_dims) | _declared_dims(model)
    unknown = sorted(set(dims) - known)
    if unknown:
        raise StudioError(f"--dim {unknown[0]!r}: the model has no dim of that name "
                          f"(its named dims: {', '.join(sorted(known)) or 'none'})")
    return cost


def _declared_dims(model: onnx.ModelProto) -> set[str]:
    return {d.dim_param for vi in model.graph.input for d in vi.type.tensor_type.shape.dim if d.dim_param}


def _fmt(value: object) -> str:
    if value is None:
        return "?"
    if isinstance(value, int):
        from editor.cli.info import human_count

        return human_count(value) if value >= 10_000 else str(value)
    return to_text(value)  # type: ignore[arg-type]


def format_cost(cost: ModelCost, *, top: int = 15) -> str:
    from editor.cli.info import human_bytes

    lines = ["cost (1 MAC = one multiply-accumulate; FLOPs = 2 x MACs)"]
    macs = _fmt(cost.macs)
    lines.append(f"  MACs        {macs}" + (f"   ({cost.unknown_nodes} nodes unknown, not counted)"
                                            if cost.unknown_nodes else ""))
    lines.append(f"  parameters  {_fmt(cost.params)}")
    by_type = ", ".join(f"{t} {human_bytes(b)}" for t, b in sorted(cost.weight_bytes_by_type.items()))
    lines.append(f"  weights     {human_bytes(cost.weight_bytes)}" + (f"  ({by_type})" if by_type else ""))
    peak = cost.peak_activation_bytes
    peak_text = human_bytes(peak) if isinstance(peak, int) else ("unknown (a value's shape is unknown)"
                                                                 if peak is None else f"{to_text(peak)} bytes")
    lines.append(f"  peak activations  {peak_text}")
    if cost.free_dims:
        lines.append(f"  in terms of: {', '.join(cost.free_dims)}  (fix them with --dim NAME=VALUE)")
    ranked = sorted((n for n in cost.nodes if n.macs), key=lambda n: -(cost.evaluate(n.macs) or 0))
    if top and ranked:
        lines.append(f"top {min(top, len(ranked))} nodes by MACs")
        for n in ranked[:top]:
            lines.append(f"  {_fmt(n.macs):>14}  {n.op_type:<18} {n.name[:60]}")
    unknown = [n for n in cost.nodes if n.macs is None]
    if unknown:
        lines.append(f"unknown ({len(unknown)})")
        for n in unknown[:top or len(unknown)]:
            lines.append(f"  {n.op_type:<18} {n.name[:50]}: {n.unknown}")
    return "\n".join(lines) + "\n"


def format_token_cost(tc: TokenCost) -> str:
    from editor.cli.info import human_bytes, human_count

    def count(n: int | None) -> str:
        return "?" if n is None else human_count(n)

    per_prompt = None if tc.prefill_macs is None else tc.prefill_macs // max(1, tc.prompt)
    lines = ["decoder, per token (batch 1)",
             f"  prefill     {count(tc.prefill_macs)} MACs for {tc.prompt} prompt tokens ({count(per_prompt)} per token)",
             f"  decode      {count(tc.decode_macs)} MACs per new token at {tc.context} cached tokens",
             f"  reads       {human_bytes(tc.decode_bytes)} per new token (weights {human_bytes(tc.weight_bytes)}"
             f" + KV cache {human_bytes(None if tc.kv_bytes_per_token is None else tc.kv_bytes_per_token * tc.context)})",
             f"  KV cache    {human_bytes(tc.kv_bytes_per_token)} per token"]
    return "\n".join(lines) + "\n"
