"""The run options: backend, onnxruntime providers (a priority list), session options,
time and memory limits, the run worker's model cache, and which values to capture.

The provider list is filled from the run worker (``RunService.providers``) the first time
the options are shown: asking costs a worker start, which the first run then does not pay.
Providers are checked and dragged into priority order; the list left as the build's default
(every provider, onnxruntime's order) means "no preference" and lets the reference evaluator
take over when onnxruntime cannot run the model.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from editor.runtime.limits import default_memory_limit_mb, describe_limit
from widgets.common.status_line import MessageLabel
from widgets.run.controller import RunSettings
from widgets.run.remote import add_remote_backends
from widgets.settings.store import APPLICATION, ORGANIZATION

BACKENDS = (
    ("auto", "Automatic"),
    ("ort", "onnxruntime"),
    ("reference", "ONNX reference evaluator"),
)
LEVELS = ("disable", "basic", "extended", "layout", "all")
CAPTURES = (("outputs", "Outputs"), ("selected", "Outputs + selection"), ("all", "Every value"))
NON_LOCAL = {"AzureExecutionProvider"}


def default_order(available: list[str]) -> list[str]:
    """onnxruntime's order with CPU last (what the runtime uses when given no list)."""
    provs = [p for p in available if p not in NON_LOCAL and p != "CPUExecutionProvider"]
    return provs + (["CPUExecutionProvider"] if "CPUExecutionProvider" in available else [])


class RunOptionsPanel(QWidget):
    """Form of the run options; :meth:`settings` gives a :class:`RunSettings`."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.backend = QComboBox(self)
        for key, label in BACKENDS:
            self.backend.addItem(label, key)
        add_remote_backends(self.backend)  # remote ones after the local ones
        self.backend.setToolTip("Automatic: onnxruntime, and the ONNX reference evaluator when onnxruntime "
                                "cannot load or run the model; or pin one backend (no fallback)")
        form.addRow("Backend", self.backend)
        self.providers = QListWidget(self)
        self.providers.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.providers.setMaximumHeight(92)
        self.providers.setToolTip("Execution providers of onnxruntime, first = preferred. Drag to reorder, "
                                  "uncheck to leave one out. Install onnxruntime-gpu for CUDA/TensorRT.")
        self.providers_note = MessageLabel("asking the run worker…", self)
        self.providers_note.setStyleSheet("color: palette(placeholder-text);")
        box = QVBoxLayout()
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.providers)
        box.addWidget(self.providers_note)
        form.addRow("Providers", box)
        self._available: list[str] = []
        self.level = QComboBox(self)
        self.level.addItems(list(LEVELS))
        self.level.setCurrentText("all")
        form.addRow("Graph optimization", self.level)
        self.intra = QSpinBox(self)
        self.intra.setRange(0, 256)
        self.intra.setSpecialValueText("default")
        self.inter = QSpinBox(self)
        self.inter.setRange(0, 256)
        self.inter.setSpecialValueText("default")
        form.addRow("Intra-op threads", self.intra)
        form.addRow("Inter-op threads", self.inter)
        self.timeout = QSpinBox(self)
        self.timeout.setRange(0, 24 * 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setSpecialValueText("none")
        self.timeout.setValue(120)
        form.addRow("Time limit", self.timeout)
        self.memory = QSpinBox(self)
        self.memory.setRange(0, 1 << 20)
        self.memory.setSingleStep(512)
        self.memory.setSuffix(" MB")
        default = default_memory_limit_mb()
        # 0 = the runtime's default cap (half the RAM): a runaway run fails by itself
        self.memory.setSpecialValueText(f"default ({describe_limit(default)})" if default else "none")
        self.memory.setToolTip("A run that needs more memory stops with 'out of memory' instead of "
                               "taking the machine; the default is half the physical memory")
        form.addRow("Memory limit", self.memory)
        from editor.runtime.memory import default_cache_bytes

        default_mb = default_cache_bytes() // (1024 * 1024)
        self.cache = QSpinBox(self)
        self.cache.setRange(0, 1 << 20)
        self.cache.setSingleStep(512)
        self.cache.setSuffix(" MB")
        self.cache.setSpecialValueText(f"automatic ({default_mb:,} MB)")
        self.cache.setToolTip("How much the run worker keeps of models run recently (parsed model and "
                              "sessions), so the next run starts warm. Automatic: a quarter of this "
                              f"machine's memory ({default_mb:,} MB). A closed tab's models are always "
                              "released, and one model per tab is kept.")
        form.addRow("Model cache", self.cache)
        self.capture = QComboBox(self)
        for key, label in CAPTURES:
            self.capture.addItem(label, key)
        self.capture.setToolTip("Values a run brings back: the graph outputs, also the values selected on "
                                "the canvas, or every value of the main graph")
        # the capture choice sits in the run toolbar (RunPanel), not in this form
        self.unfused = QCheckBox("Profile unfused", self)
        self.unfused.setToolTip("Profile runs use optimization level 'basic' (no kernel fusion), so every "
                                "time belongs to a node of your graph and shows on the canvas")
        self.unfused.setChecked(True)
        form.addRow("", self.unfused)
        self._restore()
        for w in (self.backend, self.level, self.capture):
            w.currentIndexChanged.connect(self._changed)
        for w in (self.intra, self.inter, self.timeout, self.memory, self.cache):
            w.valueChanged.connect(self._changed)
        self.unfused.toggled.connect(self._changed)
        for combo in (self.backend, self.level, self.capture):
            # narrow docks: the combos shrink instead of pushing the form off the side
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
        self.providers.itemChanged.connect(self._changed)
        self.providers.model().rowsMoved.connect(self._changed)

    # -- persistence ------------------------------------------------------------------------
    def _restore(self) -> None:
        qs = self._qs
        i = self.backend.findData(qs.value("run/backend", "auto"))
        self.backend.setCurrentIndex(max(0, i))
        level = str(qs.value("run/level", "all"))
        if level in LEVELS:
            self.level.setCurrentText(level)
        self.intra.setValue(int(qs.value("run/intra", 0)))
        self.inter.setValue(int(qs.value("run/inter", 0)))
        self.timeout.setValue(int(qs.value("run/timeout", 120)))
        self.memory.setValue(int(qs.value("run/memory", 0)))
        self.cache.setValue(int(qs.value("run/cache", 0)))

    def _changed(self, *_args) -> None:
        qs = self._qs
        qs.setValue("run/backend", self.backend.currentData())
        qs.setValue("run/level", self.level.currentText())
        qs.setValue("run/intra", self.intra.value())
        qs.setValue("run/inter", self.inter.value())
        qs.setValue("run/timeout", self.timeout.value())
        qs.setValue("run/memory", self.memory.value())
        qs.setValue("run/cache", self.cache.value())
        self.changed.emit()

    # -- providers --------------------------------------------------------------------------
    def set_available_providers(self, available: list[str]) -> None:
        self._available = list(available)
        self.providers.blockSignals(True)
        self.providers.clear()
        for name in default_order(available):
            item = QListWidgetItem(name.replace("ExecutionProvider", ""), self.providers)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsDragEnabled)
            item.setCheckState(Qt.CheckState.Checked)
        self.providers.blockSignals(False)
        n = self.providers.count()
        self.providers_note.setText(f"{n} provider{'s' if n != 1 else ''} in this build"
                                    if n else "onnxruntime reports no providers")

    def provider_list(self) -> tuple[str, ...] | None:
        """Checked providers in order, or None when that is the build's default order."""
        if not self._available:
            return None
        chosen = [self.providers.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.providers.count())
                  if self.providers.item(i).checkState() == Qt.CheckState.Checked]
        if chosen == default_order(self._available):
            return None
        return tuple(chosen) or None

    # -- result -----------------------------------------------------------------------------
    def set_capture(self, key: str) -> None:
        self.capture.setCurrentIndex(max(0, self.capture.findData(key)))

    def settings(self) -> RunSettings:
        return RunSettings(
            backend=str(self.backend.currentData()),
            providers=self.provider_list(),
            optimization=self.level.currentText(),
            intra_threads=self.intra.value(),
            inter_threads=self.inter.value(),
            timeout=float(self.timeout.value()),
            memory_limit_mb=self.memory.value(),
            capture=str(self.capture.currentData()),
            profile_unfused=self.unfused.isChecked(),
            cache_mb=self.cache.value(),
        )
