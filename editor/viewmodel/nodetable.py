"""The fields of a graph's nodes that the view model reads, read from protobuf once.

# NOTE: speed. Reading a repeated field of a ``NodeProto`` (``node.input``) builds a new
# Python sequence on every access, and walking ``node.attribute`` wraps every attribute.
# The view model's phases (values and producers, grouping, weight chains, shape plumbing,
# boxes and edges) each walked every node's inputs, outputs and attributes again: building
# the first view of a 3.2k-node int8 model took 4.6x the time of ``onnx.load`` of the same
# file. They now read one table of plain tuples, made in one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import onnx

__all__ = ["NodeTable", "node_table"]

_BODY_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


@dataclass(frozen=True, slots=True)
class NodeTable:
    """Per node of a graph (by index): op type, domain, inputs, outputs, whether it has a body."""

    nodes: Sequence[onnx.NodeProto]
    op: list[str]
    domain: list[str]
    inputs: list[list[str]]
    outputs: list[list[str]]
    #: 1 where the node has a GRAPH/GRAPHS attribute (If, Loop, Scan, a custom op's body)
    body: bytearray
    #: the ``name_of`` of every node, when the table was made with one (else empty)
    names: list[str] = field(default_factory=list)
    _reads: dict[int, list[str]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.op)

    def body_reads(self, i: int) -> list[str]:
        """Every value name the bodies of node ``i`` read (see ``folding.body_reads``)."""
        out = self._reads.get(i)
        if out is None:
            from editor.viewmodel.folding import node_body_reads

            out = self._reads[i] = node_body_reads(self.nodes[i])
        return out


def node_table(nodes: Sequence[onnx.NodeProto], name_of: Callable[[onnx.NodeProto], str] | None = None) -> NodeTable:
    """The :class:`NodeTable` of ``nodes`` (a graph's ``node`` field); with ``name_of``,
    its ``names`` too (the group tree's scoped names: read in the same pass)."""
    op: list[str] = []
    domain: list[str] = []
    inputs: list[list[str]] = []
    outputs: list[list[str]] = []
    names: list[str] = []
    body = bytearray(len(nodes))
    for i, n in enumerate(nodes):
        if name_of is not None:
            names.append(name_of(n))
        op.append(n.op_type)
        domain.append(n.domain)
        # a slice copies the names in one call (tuple(n.input) iterates the field: 4x slower)
        inputs.append(n.input[:])
        outputs.append(n.output[:])
        if n.attribute:
            for a in n.attribute:
                if a.type in _BODY_TYPES:
                    body[i] = 1
                    break
    return NodeTable(nodes, op, domain, inputs, outputs, body, names=names)
