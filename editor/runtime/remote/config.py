"""Where the remote runs go: the cluster address and the resources each run asks for.

Ray is an optional dependency (``pip install onnx-studio[ray]``): nothing here imports it
at module level, so the editor and the CLI import and work without it, and only asking for
the ``ray`` backend says that it is missing (:func:`require_ray`).

NOTE: an address may carry what lets one into a cluster (a host name, a port, a
``ray://`` client endpoint behind a tunnel). It lives in the window's QSettings or the
``ONNX_STUDIO_RAY_ADDRESS`` / ``RAY_ADDRESS`` environment variables, is handed to
``ray.init`` and nowhere else: never written into a model, a result, an error message or a
log line (:func:`redact` is what messages show instead), and Ray's own start-up logging,
which prints the address, is turned down in :func:`connect`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from editor.errors import RuntimeBackendError

__all__ = ["ADDRESS_ENV", "ClusterConfig", "connect", "parse_json_object", "ray_available", "redact", "require_ray"]

#: environment variables of the cluster address, first found wins
ADDRESS_ENV = ("ONNX_STUDIO_RAY_ADDRESS", "RAY_ADDRESS")
#: a JSON object: the Ray runtime environment of the run hosts (pip, env_vars, py_modules ...)
RUNTIME_ENV_ENV = "ONNX_STUDIO_RAY_RUNTIME_ENV"
#: a JSON object: custom Ray resources each run host asks for, e.g. a node label
RESOURCES_ENV = "ONNX_STUDIO_RAY_RESOURCES"

INSTALL_HINT = "the ray backend needs Ray: install onnx-studio[ray] (pip install 'onnx-studio[ray]')"


def ray_available() -> bool:
    """Whether Ray can be imported here (without importing it for nothing twice)."""
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def require_ray() -> Any:
    """The ``ray`` module, or a :class:`RuntimeBackendError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RuntimeBackendError(INSTALL_HINT) from None
    return ray


def redact(address: str | None) -> str:
    """What messages say instead of an address: its scheme only ("a ray:// cluster")."""
    if not address:
        return "the cluster"
    if address == "auto":
        return "the local cluster (auto)"
    if address.startswith("ray://"):
        return "the ray:// cluster"
    return "the cluster"


@dataclass(frozen=True)
class ClusterConfig:
    """A cluster and what each run host (one Ray actor) asks of it.

    ``address``: ``ray://host:10001`` (Ray Client), ``host:6379`` (a GCS address, from a
    node of the cluster), ``auto`` (the cluster this machine belongs to) or None: the one
    ``ray.init`` is already connected to in this process, else the environment's address.
    ``num_gpus``/``num_cpus``: what each host reserves (a run is pinned to a GPU by asking
    for one). ``resources``: custom Ray resources, e.g. ``{"a100": 1}`` or a node label
    ``{"node:10.0.0.5": 0.01}`` to pin runs to one machine. ``runtime_env``: Ray's runtime
    environment for the hosts (``{"pip": ["onnxruntime-gpu==1.20.1"]}``, ``py_modules`` with
    this package when the cluster does not have it installed).
    """

    address: str | None = None
    num_gpus: float = 0.0
    num_cpus: float = 1.0
    resources: dict[str, float] = field(default_factory=dict)
    runtime_env: dict[str, Any] | None = None

    @classmethod
    def from_env(cls, address: str | None = None, *, num_gpus: float | None = None,
                 resources: dict[str, Any] | None = None, runtime_env: dict[str, Any] | None = None) -> ClusterConfig:
        """What is given, else the environment: the first of :data:`ADDRESS_ENV` that is
        set, ``ONNX_STUDIO_RAY_RESOURCES`` and ``ONNX_STUDIO_RAY_RUNTIME_ENV`` (JSON)."""
        if not address:
            address = next((os.environ[k] for k in ADDRESS_ENV if os.environ.get(k)), None)
        if runtime_env is None:
            runtime_env = _json_object(RUNTIME_ENV_ENV)
        if resources is None:
            resources = _json_object(RESOURCES_ENV) or {}
        try:
            resources = {str(k): float(v) for k, v in resources.items()}
        except (TypeError, ValueError):
            raise RuntimeBackendError(f"{RESOURCES_ENV} must map resource names to numbers") from None
        if num_gpus is not None and num_gpus < 0:
            raise RuntimeBackendError(f"--num-gpus {num_gpus:g}: give a number >= 0")
        return cls(address=address, num_gpus=float(num_gpus or 0.0), resources=resources, runtime_env=runtime_env)

    def actor_options(self) -> dict[str, Any]:
        """``ray.remote(...)`` options of a run host."""
        opts: dict[str, Any] = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus,
                                # a second thread answers cancel/stats while a run holds the first
                                "max_concurrency": 4, "max_restarts": 0}
        if self.resources:
            opts["resources"] = dict(self.resources)
        if self.runtime_env:
            opts["runtime_env"] = dict(self.runtime_env)
        return opts


#: seconds to wait for the cluster's port to answer before giving up
PROBE_SECONDS = 10.0


def _probe(address: str) -> None:
    """Fail fast when nothing listens at ``address``: ``ray.init`` itself waits minutes for
    an absent GCS (measured: over 5 minutes), which would be a hang to the user."""
    import socket

    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise RuntimeBackendError("the cluster address is not HOST:PORT, ray://HOST:PORT or 'auto'")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        reason = "connection refused" if isinstance(exc, ConnectionRefusedError) else type(exc).__name__
        raise RuntimeBackendError(f"cannot reach {redact(address)}: nothing answers at its address ({reason})") from None


def _json_object(variable: str) -> dict[str, Any] | None:
    return parse_json_object(os.environ.get(variable) or "", variable)


def parse_json_object(text: str, what: str) -> dict[str, Any] | None:
    """``text`` as a JSON object (None when blank); one clear error line otherwise."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RuntimeBackendError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise RuntimeBackendError(f"{what} must be a JSON object")
    return value


_connect_lock = threading.Lock()
_connected_to: list[str | None] = []  # the address this process connected to (one at most)


def connect(address: str | None) -> Any:
    """Connect this process to the cluster at ``address`` once; returns the ``ray`` module.

    An existing connection is reused when it is the same address (or ``address`` is None);
    a different address replaces a connection this module made. Failures are one
    :class:`RuntimeBackendError` line that does not quote the address.
    """
    ray = require_ray()
    with _connect_lock:
        if ray.is_initialized():
            if address is None or not _connected_to or _connected_to[0] == address:
                return ray
            ray.shutdown()
            _connected_to.clear()
        if address is None:
            raise RuntimeBackendError("no cluster address: give --cluster ADDRESS, set ONNX_STUDIO_RAY_ADDRESS, "
                                      "or set it in Settings > Backends")
        _probe(address)
        # Ray logs "Connecting to existing Ray cluster at address: ..." at INFO: keep the
        # address out of the terminal and the editor's log (module NOTE)
        for name in ("ray", "ray._private", "ray.util.client", "ray._private.worker"):
            logging.getLogger(name).setLevel(logging.ERROR)
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                     ignore_reinit_error=True, configure_logging=True)
        except Exception as exc:  # noqa: BLE001 - any failure to connect is one line
            msg = str(exc).replace(address, "<address>").splitlines()
            raise RuntimeBackendError(f"cannot connect to {redact(address)}: "
                                      f"{type(exc).__name__}: {msg[0] if msg else ''}"[:300]) from None
        _connected_to[:] = [address]
        return ray
