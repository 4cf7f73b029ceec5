"""Remote backends: the same runs on a cluster the team already has (Ray), never a server
protocol of our own.

- :class:`RayRunner`: the :class:`~editor.runtime.Runner` interface on a Ray cluster (one
  run host, an actor pinned to the resources asked for); :class:`RayPool`: several hosts
  sharing one upload of each model, for the fan-out of ``compare`` and ``reduce``;
- :class:`ClusterConfig`: address, GPUs, custom resources, runtime environment;
- :func:`cluster_info`: what the cluster offers (nodes, GPUs, onnxruntime builds).

Ray is optional: importing this package does not import it (see :mod:`.config`).
"""

from __future__ import annotations

from editor.runtime.remote.cluster import ClusterInfo, NodeInfo, cluster_info
from editor.runtime.remote.config import ClusterConfig, connect, ray_available, redact, require_ray
from editor.runtime.remote.ray_runner import RayPool, RayRunner
from editor.runtime.remote.shipping import ModelStore, Shipment

__all__ = [
    "ClusterConfig",
    "ClusterInfo",
    "ModelStore",
    "NodeInfo",
    "RayPool",
    "RayRunner",
    "Shipment",
    "cluster_info",
    "connect",
    "ray_available",
    "redact",
    "require_ray",
]
