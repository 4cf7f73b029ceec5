"""Per-node times from an onnxruntime profile.

onnxruntime writes a Chrome-trace JSON list when ``SessionOptions.enable_profiling`` is set;
each kernel execution is an event with ``"cat": "Node"`` and a name ending in
``_kernel_time`` (``<node name>_kernel_time``), its ``dur`` in microseconds and the op type
in ``args.op_name``. ``parse_ort_profile`` sums them per node. A node without a name is
profiled as ``<op type>_<its index in the graph>`` (:func:`profile_node_names`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable
from typing import Any

__all__ = ["NodeTime", "main_profile_names", "parse_ort_profile", "profile_node_names"]

_SUFFIX = "_kernel_time"


@dataclass(frozen=True)
class NodeTime:
    """Total kernel time of one node over the profiled run(s)."""

    node: str
    op_type: str
    microseconds: float
    calls: int
    provider: str


def parse_ort_profile(source: str | Path | list[dict[str, Any]]) -> dict[str, NodeTime]:
    """Node name -> :class:`NodeTime`, from a profile file path or its parsed events.

    Nodes without a name appear under onnxruntime's generated name for them.
    """
    if isinstance(source, (str, Path)):
        events = json.loads(Path(source).read_text(encoding="utf-8"))
    else:
        events = source
    times: dict[str, NodeTime] = {}
    for event in events:
        if not isinstance(event, dict) or event.get("cat") != "Node":
            continue
        name = str(event.get("name", ""))
        if not name.endswith(_SUFFIX):
            continue  # fence_before / fence_after events
        node = name[: -len(_SUFFIX)]
        args = event.get("args") or {}
        dur = float(event.get("dur", 0.0))
        prev = times.get(node)
        if prev is None:
            times[node] = NodeTime(
                node=node,
                op_type=str(args.get("op_name", "")),
                microseconds=dur,
                calls=1,
                provider=str(args.get("provider", "")),
            )
        else:
            times[node] = NodeTime(
                node=node,
                op_type=prev.op_type,
                microseconds=prev.microseconds + dur,
                calls=prev.calls + 1,
                provider=prev.provider,
            )
    return times


def profile_node_names(nodes: Iterable[tuple[str, str]]) -> list[str]:
    """The name onnxruntime's profile gives each node of a main graph, from its
    ``(name, op_type)`` in graph order: its own name, else ``<op_type>_<index>`` (the
    session's node index, which is the node's place in the graph; 39 of squeezenet's 105
    nodes have no name and got no time before)."""
    return [name or f"{op}_{k}" for k, (name, op) in enumerate(nodes)]


def main_profile_names(doc: Any) -> dict[int, str]:
    """Main-scope node id of ``doc`` (an :class:`editor.document.Document`) -> the name
    onnxruntime's profile gives that node."""
    ids = doc.index.scopes[doc.index.main].node_ids
    nodes = [doc.node(nid) for nid in ids]
    return dict(zip(ids, profile_node_names((n.name, n.op_type) for n in nodes)))
