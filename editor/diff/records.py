"""The diff's result records: what a :class:`ModelDiff` lists and how it summarises."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import onnx

SAME, CHANGED, ADDED, REMOVED = "same", "changed", "added", "removed"


# -- result records --------------------------------------------------------------------
@dataclass(frozen=True)
class NodeRef:
    id: int  # node id in its document
    name: str
    op_type: str
    domain: str
    scope: str  # graph path, e.g. "main" or "main/If_0.then_branch"

    def label(self) -> str:
        op = f"{self.domain}.{self.op_type}" if self.domain not in ("", "ai.onnx") else self.op_type
        where = "" if self.scope == "main" else f" in {self.scope}"
        return f"{self.name!r} ({op}){where}" if self.name else f"<unnamed {op} #{self.id}>{where}"


@dataclass
class AttributeChange:
    name: str
    old: str | None  # None: absent on that side
    new: str | None


@dataclass
class PortChange:
    index: int
    old: str | None  # value name on A (None: no such port)
    new: str | None


@dataclass
class NodeChange:
    a: NodeRef
    b: NodeRef
    kinds: list[str]  # "renamed", "op_type", "domain", "attributes", "inputs", "outputs", "subgraph", "doc_string", "quantized", "weights"
    attributes: list[AttributeChange] = field(default_factory=list)
    inputs: list[PortChange] = field(default_factory=list)
    outputs: list[PortChange] = field(default_factory=list)
    subgraphs: list[str] = field(default_factory=list)  # attribute names whose bodies differ
    #: kind "quantized": inputs that now read their value through an inserted
    #: QuantizeLinear -> DequantizeLinear, or a DequantizeLinear of a quantized weight (QDQ)
    quantized: list[PortChange] = field(default_factory=list)
    #: kind "weights": weight inputs (constant values on both sides) that read other weights
    weights: list[PortChange] = field(default_factory=list)


@dataclass
class ValueRename:
    scope: str
    old: str
    new: str


@dataclass
class InitializerChange:
    scope: str
    name: str  # the name on A (see values_renamed when B calls it differently)
    kinds: list[str]  # "dtype", "shape", "values"
    old: str  # "float[64,3,3,3]" (ONNX element type names, lower case)
    new: str
    max_abs_diff: float | None = None  # values: largest difference (numeric tensors)
    differing: int | None = None  # values: how many elements differ beyond the tolerance
    note: str = ""


@dataclass
class IOChange:
    scope: str
    kind: str  # "input" | "output"
    name: str
    old: str | None  # type text on A (None: added)
    new: str | None  # type text on B (None: removed)


@dataclass
class FieldChange:
    field: str  # "ir_version", "opset:ai.onnx", "metadata:key", "function:domain.name", ...
    old: Any
    new: Any


@dataclass
class Rewrite:
    """Nodes of A replaced by nodes of B that compute the same quantity another way: a
    quantization (Conv -> DynamicQuantizeLinear + ConvInteger + ...), a fusion (Conv +
    BatchNormalization -> Conv) or another rewrite (an opset conversion's new spelling).
    ``values`` pairs the A values at the region's boundary with the B values that carry
    the same quantity, for a numeric comparison of the two models."""

    kind: str  # "quantized" | "dequantized" | "fused" | "rewritten"
    summary: str  # "Conv quantized to int8 (ConvInteger)"
    a: list[NodeRef]
    b: list[NodeRef]
    values: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ModelDiff:
    nodes_added: list[NodeRef] = field(default_factory=list)
    nodes_removed: list[NodeRef] = field(default_factory=list)
    nodes_changed: list[NodeChange] = field(default_factory=list)
    nodes_same: int = 0
    values_renamed: list[ValueRename] = field(default_factory=list)
    initializers_added: list[str] = field(default_factory=list)  # "scope:name type"
    initializers_removed: list[str] = field(default_factory=list)
    initializers_changed: list[InitializerChange] = field(default_factory=list)
    io_changes: list[IOChange] = field(default_factory=list)
    model_changes: list[FieldChange] = field(default_factory=list)
    status_a: dict[int, str] = field(default_factory=dict)
    status_b: dict[int, str] = field(default_factory=dict)
    pairs: dict[int, int] = field(default_factory=dict)  # A node id -> B node id
    #: regions recognised as one rewrite each (their nodes are not in nodes_added/removed)
    rewrites: list[Rewrite] = field(default_factory=list)
    #: weight nodes (Constants, constant-only chains) of either side without a counterpart
    #: whose readers are paired: the other side holds those weights another way (an
    #: initializer, a folded chain); the readers' changes say whether the weights differ.
    #: Not in nodes_added/removed; their status is "same".
    weight_nodes: list[NodeRef] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.nodes_added or self.nodes_removed or self.nodes_changed or self.values_renamed
                    or self.rewrites or self.weight_nodes
                    or self.initializers_added or self.initializers_removed or self.initializers_changed
                    or self.io_changes or self.model_changes)

    def counts(self) -> dict[str, int]:
        return {
            "nodes_same": self.nodes_same,
            "nodes_changed": len(self.nodes_changed),
            "nodes_added": len(self.nodes_added),
            "nodes_removed": len(self.nodes_removed),
            "rewrites": len(self.rewrites),
            "weight_nodes": len(self.weight_nodes),
            "values_renamed": len(self.values_renamed),
            "initializers_changed": len(self.initializers_changed),
            "initializers_added": len(self.initializers_added),
            "initializers_removed": len(self.initializers_removed),
            "io_changes": len(self.io_changes),
            "model_changes": len(self.model_changes),
        }

    def rewrite_counts(self) -> dict[str, int]:
        """Rewrite summary -> how many regions had it ("Conv quantized to int8": 63)."""
        out: dict[str, int] = {}
        for rw in self.rewrites:
            out[rw.summary] = out.get(rw.summary, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (status maps keyed by node id as text)."""
        out = asdict(self)
        for key in ("status_a", "status_b", "pairs"):
            out[key] = {str(k): v for k, v in out[key].items()}
        out["identical"] = self.identical
        out["counts"] = self.counts()
        return out

    def summary_lines(self) -> list[str]:
        """A human summary, one change per line."""
        if self.identical:
            return [f"identical ({self.nodes_same} nodes)"]
        lines = [
            f"nodes: {self.nodes_same} same, {len(self.nodes_changed)} changed, "
            f"{len(self.nodes_added)} added, {len(self.nodes_removed)} removed"
            + (f", {len(self.rewrites)} rewritten" if self.rewrites else "")
        ]
        for text, count in self.rewrite_counts().items():
            lines.append(f"~ {count} {text}" if count > 1 else f"~ {text}")
        if self.weight_nodes:
            ops = ", ".join(dict.fromkeys(r.op_type for r in self.weight_nodes))
            lines.append(f"~ {len(self.weight_nodes)} weight node{'s' if len(self.weight_nodes) > 1 else ''} "
                         f"({ops}) held another way on the other side (an initializer, a folded chain)")
        for c in self.model_changes:
            lines.append(f"~ {c.field}: {c.old!r} -> {c.new!r}")
        for io in self.io_changes:
            if io.old is None:
                lines.append(f"+ graph {io.kind} {io.name!r}: {io.new}")
            elif io.new is None:
                lines.append(f"- graph {io.kind} {io.name!r}: {io.old}")
            else:
                lines.append(f"~ graph {io.kind} {io.name!r}: {io.old} -> {io.new}")
        for r in self.nodes_removed:
            lines.append(f"- node {r.label()}")
        for r in self.nodes_added:
            lines.append(f"+ node {r.label()}")
        for ch in self.nodes_changed:
            parts = []
            if "renamed" in ch.kinds:
                parts.append(f"renamed to {ch.b.name!r}")
            if "op_type" in ch.kinds or "domain" in ch.kinds:
                parts.append(f"op {ch.a.domain + '.' if ch.a.domain else ''}{ch.a.op_type} -> "
                             f"{ch.b.domain + '.' if ch.b.domain else ''}{ch.b.op_type}")
            for at in ch.attributes:
                parts.append(f"{at.name}: {at.old if at.old is not None else '(none)'} -> "
                             f"{at.new if at.new is not None else '(none)'}")
            for p in ch.inputs:
                parts.append(f"input {p.index}: {p.old!r} -> {p.new!r}")
            for p in ch.outputs:
                parts.append(f"output {p.index}: {p.old!r} -> {p.new!r}")
            for s in ch.subgraphs:
                parts.append(f"body {s!r} changed")
            if "weights" in ch.kinds:
                parts.append("weights: " + ", ".join(f"input {p.index} {p.old!r} -> {p.new!r}" for p in ch.weights))
            if ch.quantized:
                ports = ", ".join(str(p.index) for p in ch.quantized)
                parts.append(f"quantized (QDQ: input{'s' if len(ch.quantized) > 1 else ''} {ports})")
            if "doc_string" in ch.kinds:
                parts.append("doc_string changed")
            lines.append(f"~ node {ch.a.label()}: " + "; ".join(parts))
        for v in self.values_renamed:
            where = "" if v.scope == "main" else f" in {v.scope}"
            lines.append(f"~ value {v.old!r} renamed to {v.new!r}{where}")
        for name in self.initializers_removed:
            lines.append(f"- initializer {name}")
        for name in self.initializers_added:
            lines.append(f"+ initializer {name}")
        for ic in self.initializers_changed:
            text = f"~ initializer {ic.name!r}: "
            if "values" in ic.kinds and len(ic.kinds) == 1:
                text += f"values differ ({ic.differing} elements"
                text += f", max |diff| {ic.max_abs_diff:.6g})" if ic.max_abs_diff is not None else ")"
            else:
                text += f"{ic.old} -> {ic.new}"
            if ic.note:
                text += f" ({ic.note})"
            lines.append(text)
        return lines
