"""The Backends settings page: which cluster remote runs go to, and what it offers.

"Test connection" connects off the GUI thread and lists the cluster's nodes with their
CPUs, GPUs and onnxruntime build (version and execution providers), so a user can see
whether ``--num-gpus 1`` or the CUDA provider can be had before running anything. The
address is saved in QSettings only (see :mod:`widgets.run.remote`).
"""

from __future__ import annotations


from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.runtime.remote.config import INSTALL_HINT, ClusterConfig, parse_json_object, ray_available
from widgets.common.status_line import MessageLabel
from widgets.run.remote import GPUS_KEY, RESOURCES_KEY, RUNTIME_ENV_KEY, save_cluster_settings, stored, stored_address

__all__ = ["BackendsDialog", "BackendsPage"]


class _ProbeThread(QThread):
    """``cluster_info`` off the GUI thread; ``done(info or None, error text)``."""

    done = Signal(object, str)

    def __init__(self, config: ClusterConfig, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.config = config

    def run(self) -> None:  # noqa: D102 - QThread entry point
        from editor.errors import StudioError
        from editor.runtime.remote import cluster_info

        try:
            self.done.emit(cluster_info(self.config), "")
        except StudioError as exc:
            self.done.emit(None, exc.message)
        except Exception as exc:  # noqa: BLE001 - shown, never raised on the GUI thread
            self.done.emit(None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


class BackendsPage(QWidget):
    """Cluster address, GPUs per run, Test connection, and the nodes seen."""

    tested = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        intro = QLabel("Local runs use a child process on this machine. A <b>Ray cluster</b> runs the same "
                       "work on the team's machines: pick <i>Ray cluster (remote)</i> in the Run options.", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.address = QLineEdit(self)
        self.address.setPlaceholderText("ray://head-node:10001, head-node:6379 or auto "
                                        "(empty: $ONNX_STUDIO_RAY_ADDRESS)")
        self.address.setText(stored_address())
        form.addRow("Cluster address", self.address)
        self.gpus = QDoubleSpinBox(self)
        self.gpus.setRange(0, 64)
        self.gpus.setDecimals(2)
        try:
            self.gpus.setValue(float(stored(GPUS_KEY) or 0))
        except (TypeError, ValueError):
            self.gpus.setValue(0)
        self.gpus.setToolTip("GPUs each run reserves on the cluster (0: CPU nodes will do)")
        form.addRow("GPUs per run", self.gpus)
        self.resources = QLineEdit(self)
        self.resources.setPlaceholderText('optional JSON, e.g. {"node:10.0.0.5": 0.01} to pin runs to one node')
        self.resources.setText(stored(RESOURCES_KEY))
        form.addRow("Resources", self.resources)
        self.runtime_env = QLineEdit(self)
        self.runtime_env.setPlaceholderText('optional Ray runtime environment, e.g. {"pip": ["onnxruntime-gpu"]}')
        self.runtime_env.setText(stored(RUNTIME_ENV_KEY))
        form.addRow("Runtime environment", self.runtime_env)
        layout.addLayout(form)
        row = QHBoxLayout()
        self.test = QPushButton("Test Connection", self)
        self.test.clicked.connect(self.test_connection)
        row.addWidget(self.test)
        row.addStretch(1)
        layout.addLayout(row)
        self.status = MessageLabel("", self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        self.nodes = QTableWidget(0, 5, self)
        self.nodes.setHorizontalHeaderLabels(["Node", "CPUs", "GPUs", "onnxruntime", "Providers"])
        self.nodes.horizontalHeader().setStretchLastSection(True)
        self.nodes.verticalHeader().setVisible(False)
        layout.addWidget(self.nodes, 1)
        self._thread: _ProbeThread | None = None
        if not ray_available():
            self.test.setEnabled(False)
            self.status.setText(INSTALL_HINT)

    def config(self) -> ClusterConfig:
        """What the fields say (a bad JSON field raises one clear RuntimeBackendError)."""
        return ClusterConfig.from_env(
            self.address.text().strip() or None, num_gpus=self.gpus.value(),
            resources=parse_json_object(self.resources.text(), "Resources"),
            runtime_env=parse_json_object(self.runtime_env.text(), "Runtime environment"))

    def save(self) -> None:
        save_cluster_settings(self.address.text(), self.gpus.value(), self.resources.text(), self.runtime_env.text())

    def test_connection(self) -> None:
        if self._thread is not None:
            return
        try:
            config = self.config()
        except Exception as exc:  # noqa: BLE001 - a bad runtime env variable, say
            self.status.setText(str(exc))
            return
        self.test.setEnabled(False)
        self.status.setStyleSheet("")
        self.status.setText("Connecting…")
        self.nodes.setRowCount(0)
        thread = _ProbeThread(config, self)
        thread.done.connect(self._on_done)
        self._thread = thread
        thread.start()

    def _on_done(self, info, error: str) -> None:  # noqa: ANN001
        if self._thread is not None:
            self._thread.wait()
            self._thread.deleteLater()
            self._thread = None
        self.test.setEnabled(True)
        if info is None:
            self.status.setStyleSheet("color: #c0392b;")
            self.status.setText(f"Cannot connect: {error}")
            self.tested.emit(False)
            return
        self.status.setText(f"Connected: {info.summary()}")
        self.nodes.setRowCount(len(info.nodes))
        for row, node in enumerate(info.nodes):
            providers = ", ".join(p.replace("ExecutionProvider", "") for p in node.providers) or (node.error or "")
            for col, text in enumerate([node.host, f"{node.cpus:g}", f"{node.gpus:g}", node.onnxruntime or "-",
                                        providers]):
                self.nodes.setItem(row, col, QTableWidgetItem(text))
        self.nodes.resizeColumnsToContents()
        self.tested.emit(True)

    def wait(self, ms: int = 60_000) -> None:
        """Wait for a test in flight (closing the page, tests)."""
        if self._thread is not None:
            self._thread.wait(ms)


class BackendsDialog(QDialog):
    """The Backends page as a settings dialog (Run > Backends…); OK saves."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Backends")
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        self.page = BackendsPage(self)
        layout.addWidget(self.page)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def accept(self) -> None:  # noqa: D102
        self.page.save()
        self.page.wait()
        super().accept()

    def reject(self) -> None:  # noqa: D102
        self.page.wait()
        super().reject()
