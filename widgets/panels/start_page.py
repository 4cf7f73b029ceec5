"""The start page shown when no model is open: open a file, the bundled sample, recent files."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.common.formatting import path_for_qt, path_from_qt, shown

PATH_ROLE = Qt.ItemDataRole.UserRole + 1


class StartPage(QWidget):
    """``openRequested(path)`` for a recent file or the sample; ``browseRequested()``."""

    openRequested = Signal(str)
    browseRequested = Signal()

    def __init__(self, parent: QWidget | None = None, *, sample: Path | None = None) -> None:
        super().__init__(parent)
        self._sample = sample
        title = QLabel("ONNX Studio", self)
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 2.0)
        font.setBold(True)
        title.setFont(font)
        subtitle = QLabel("Open a model to browse, find, inspect and edit it. "
                          "Drop a .onnx file anywhere on this window.", self)
        subtitle.setWordWrap(True)
        self.open_button = QPushButton("Open Model…", self)
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.browseRequested)
        self.sample_button = QPushButton("Open Sample (Magika)", self)
        self.sample_button.setEnabled(sample is not None and sample.is_file())
        self.sample_button.clicked.connect(self._open_sample)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch(1)
        recent_title = QLabel("Recent", self)
        rfont = QFont(recent_title.font())
        rfont.setBold(True)
        recent_title.setFont(rfont)
        self.recent = QListWidget(self)
        self.recent.setFrameShape(QFrame.Shape.NoFrame)
        self.recent.itemActivated.connect(self._on_item)
        self.recent.itemClicked.connect(self._on_item)
        self.empty = QLabel("No recent files.", self)
        self.empty.setEnabled(False)
        column = QVBoxLayout()
        column.setSpacing(10)
        column.addWidget(title)
        column.addWidget(subtitle)
        column.addSpacing(8)
        column.addLayout(buttons)
        column.addSpacing(16)
        column.addWidget(recent_title)
        column.addWidget(self.empty)
        column.addWidget(self.recent, 1)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addLayout(column, 3)
        outer.addStretch(1)
        outer.setContentsMargins(24, 48, 24, 24)

    @property
    def sample_path(self) -> Path | None:
        return self._sample if self._sample is not None and self._sample.is_file() else None

    def set_recent(self, paths: list[str]) -> None:
        self.recent.clear()
        for path in paths:
            p = Path(path)
            item = QListWidgetItem(shown(f"{p.name}    {p.parent}"))
            item.setData(PATH_ROLE, path_for_qt(path))
            item.setToolTip(shown(path))
            if not p.exists():
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.recent.addItem(item)
        self.empty.setVisible(not paths)
        self.recent.setVisible(bool(paths))

    def _on_item(self, item: QListWidgetItem) -> None:
        path = path_from_qt(item.data(PATH_ROLE) or "")
        if path:
            self.openRequested.emit(path)

    def _open_sample(self) -> None:
        if self._sample is not None:
            self.openRequested.emit(str(self._sample))
