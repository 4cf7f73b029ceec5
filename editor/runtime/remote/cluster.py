"""What a cluster offers: its nodes, their CPUs and GPUs, and the onnxruntime build each
node's Python has (version and execution providers), for the Backends settings page's
"Test connection" and for choosing ``--num-gpus``.

Each alive node is asked by a tiny Ray task pinned to it (no CPU reserved, so a busy
cluster still answers); a node that does not answer in time is listed with what Ray knows
of it and the reason it did not answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from editor.runtime.remote.config import ClusterConfig, connect

__all__ = ["ClusterInfo", "NodeInfo", "cluster_info"]


@dataclass
class NodeInfo:
    """One node: Ray's id, its resources, and its onnxruntime build (None: not answered)."""

    node_id: str
    host: str
    cpus: float = 0.0
    gpus: float = 0.0
    onnxruntime: str | None = None
    providers: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class ClusterInfo:
    """Every alive node of the cluster, and how long asking took."""

    nodes: list[NodeInfo]
    seconds: float = 0.0

    @property
    def gpus(self) -> float:
        return sum(n.gpus for n in self.nodes)

    @property
    def cpus(self) -> float:
        return sum(n.cpus for n in self.nodes)

    def summary(self) -> str:
        """One line: "2 nodes, 16 CPUs, 1 GPU; onnxruntime 1.20.1 (CUDA, CPU)"."""
        builds = sorted({f"{n.onnxruntime} ({', '.join(p.replace('ExecutionProvider', '') for p in n.providers)})"
                         for n in self.nodes if n.onnxruntime})
        n = len(self.nodes)
        text = f"{n} node{'s' if n != 1 else ''}, {self.cpus:g} CPUs, {self.gpus:g} GPU{'s' if self.gpus != 1 else ''}"
        if builds:
            text += "; onnxruntime " + "; ".join(builds)
        missing = sum(1 for node in self.nodes if node.onnxruntime is None)
        if missing:
            text += f"; {missing} node(s) without onnxruntime or not answering"
        return text


def _probe() -> dict[str, Any]:
    """Runs on a node: its onnxruntime build."""
    try:
        import onnxruntime

        return {"onnxruntime": onnxruntime.__version__, "providers": list(onnxruntime.get_available_providers())}
    except ImportError:
        return {"onnxruntime": None, "providers": [], "error": "onnxruntime is not installed on this node"}


def cluster_info(config: ClusterConfig, timeout: float = 60.0) -> ClusterInfo:
    """Connect (see :func:`~editor.runtime.remote.config.connect`) and describe the cluster."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    start = time.monotonic()
    ray = connect(config.address)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    options: dict[str, Any] = {"num_cpus": 0}
    if config.runtime_env:
        options["runtime_env"] = dict(config.runtime_env)
    probe = ray.remote(**options)(_probe)
    infos, refs = [], []
    for node in nodes:
        res = node.get("Resources", {})
        infos.append(NodeInfo(node_id=node["NodeID"], host=str(node.get("NodeManagerHostname") or node.get("NodeName")),
                              cpus=float(res.get("CPU", 0.0)), gpus=float(res.get("GPU", 0.0))))
        refs.append(probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote())
    deadline = start + timeout
    for info, ref in zip(infos, refs):
        try:
            answer = ray.get(ref, timeout=max(0.1, deadline - time.monotonic()))
        except Exception as exc:  # noqa: BLE001 - a node that does not answer is still listed
            info.error = f"did not answer: {type(exc).__name__}"
            ray.cancel(ref, force=True)
            continue
        info.onnxruntime = answer.get("onnxruntime")
        info.providers = list(answer.get("providers", []))
        info.error = answer.get("error")
    return ClusterInfo(infos, time.monotonic() - start)
