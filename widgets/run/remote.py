"""Remote backends in the window: where their settings live, the picker's entries, and the
runner a remote run goes to.

The cluster address and what each run host asks for are kept in the app's QSettings under
``backends/ray/...`` (or come from ``ONNX_STUDIO_RAY_ADDRESS`` / ``RAY_ADDRESS`` when the
settings name none); they never go into a model, a run result or a log line. The Run dock's
backend picker lists the remote backends after the local ones; without Ray installed the
entry is there but disabled, its tooltip saying how to install it.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox

from editor.runtime.remote.config import INSTALL_HINT, ClusterConfig, parse_json_object, ray_available
from widgets.settings.store import APPLICATION, ORGANIZATION

__all__ = ["REMOTE_BACKENDS", "add_remote_backends", "cluster_config", "save_cluster_settings"]

#: picker key -> label, after the local backends
REMOTE_BACKENDS = (("ray", "Ray cluster (remote)"),)

ADDRESS_KEY = "backends/ray/address"
GPUS_KEY = "backends/ray/num_gpus"
RESOURCES_KEY = "backends/ray/resources"
RUNTIME_ENV_KEY = "backends/ray/runtime_env"


def _qs() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def cluster_config() -> ClusterConfig:
    """The cluster the window runs on: its settings, else the environment's address."""
    qs = _qs()
    address = str(qs.value(ADDRESS_KEY, "") or "") or None
    try:
        gpus = float(qs.value(GPUS_KEY, 0) or 0)
    except (TypeError, ValueError):
        gpus = 0.0
    return ClusterConfig.from_env(
        address, num_gpus=max(0.0, gpus),
        resources=parse_json_object(stored(RESOURCES_KEY), "Resources"),
        runtime_env=parse_json_object(stored(RUNTIME_ENV_KEY), "Runtime environment"))


def stored(key: str) -> str:
    return str(_qs().value(key, "") or "")


def stored_address() -> str:
    return stored(ADDRESS_KEY)


def save_cluster_settings(address: str, num_gpus: float, resources: str = "", runtime_env: str = "") -> None:
    """Keep the Backends page's values (JSON texts as typed: checked when used)."""
    qs = _qs()
    qs.setValue(ADDRESS_KEY, address.strip())
    qs.setValue(GPUS_KEY, float(num_gpus))
    qs.setValue(RESOURCES_KEY, resources.strip())
    qs.setValue(RUNTIME_ENV_KEY, runtime_env.strip())
    qs.sync()


def add_remote_backends(combo: QComboBox) -> None:
    """Append the remote backends to a backend picker (disabled when Ray is missing)."""
    have_ray = ray_available()
    for key, label in REMOTE_BACKENDS:
        combo.addItem(label, key)
        index = combo.count() - 1
        if have_ray:
            combo.setItemData(index, "Runs on the Ray cluster set in Run > Backends… (same engines: "
                                     "onnxruntime, then the reference evaluator)", 3)  # ToolTipRole
        else:
            combo.setItemData(index, INSTALL_HINT, 3)
            model = combo.model()
            if isinstance(model, QStandardItemModel):
                item = model.item(index)
                if item is not None:
                    item.setEnabled(False)


def is_remote(key: str) -> bool:
    return any(key == k for k, _ in REMOTE_BACKENDS)
