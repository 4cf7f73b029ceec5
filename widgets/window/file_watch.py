"""Files changed on disk while open: noticed, offered for reload, never silently overwritten.

When another program (an export script, a second window) rewrites an open model or one of
its external data files, the tab shows a bar: a clean document offers **Reload**; one with
edits warns that saving will overwrite the newer file. Save over a file that changed since
it was read asks first (:meth:`FileWatch.confirm_overwrite`, called by the window's Save).

Change detection: ``QFileSystemWatcher`` on the model and its data files, plus a check when
the window is activated (watchers miss changes on some network file systems, and a file
replaced by rename drops out of the watch). A file counts as changed when its (device,
inode, size, mtime) differs from what the document read or last saved itself
(``Document.saved``), so our own saves never raise the bar.
"""

from __future__ import annotations

import os
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QFileSystemWatcher, QObject, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QPushButton

Identity = tuple[int, int, int, int] | None


def identity(path: Path) -> Identity:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class ChangedBar(QFrame):
    """The bar at the top of a tab whose files changed on disk."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setObjectName("changedOnDisk")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#changedOnDisk { background: #fff4ce; color: #3b2e00; }")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.reload_button = QPushButton("Reload", self)
        self.dismiss_button = QPushButton("Ignore", self)
        row.addWidget(self.label, 1)
        row.addWidget(self.reload_button)
        row.addWidget(self.dismiss_button)
        self.hide()


class _Watched:
    def __init__(self, tab) -> None:  # noqa: ANN001
        self.tab = tab
        self.known: dict[Path, Identity] = {}
        self.changed: set[Path] = set()
        self.bar = ChangedBar(tab)
        tab.layout().insertWidget(0, self.bar)
        self.remember()

    def files(self) -> list[Path]:
        doc = self.tab.doc
        out = [doc.path] if doc.path is not None else []
        if doc.store is not None:
            out += list(doc.store.files())
        return out

    def remember(self) -> None:
        self.known = {p: identity(p) for p in self.files()}
        self.changed.clear()


class FileWatch(QObject):
    """See module docstring; one per main window (:func:`install_file_watch`)."""

    def __init__(self, window) -> None:  # noqa: ANN001
        super().__init__(window)
        self.window = window
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._schedule)
        self.watched: dict[int, _Watched] = {}
        # a save by rename fires several events; look once things settle
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.check_all)
        window.modelShown.connect(self.watch)
        window.installEventFilter(self)

    # -- tabs --------------------------------------------------------------------------
    def watch(self, tab) -> None:  # noqa: ANN001
        key = id(tab)
        if key in self.watched:
            return
        entry = _Watched(tab)
        self.watched[key] = entry
        entry.bar.reload_button.clicked.connect(lambda: self.reload(tab))
        entry.bar.dismiss_button.clicked.connect(lambda: self._dismiss(tab))
        tab.doc.saved.connect(lambda *_a, t=tab: self._on_saved(t))
        tab.doc.clean_changed.connect(lambda *_a, t=tab: self._update_bar(t))
        tab.destroyed.connect(lambda *_a, k=key: self._forget(k))
        self._rewatch()

    def _forget(self, key: int) -> None:
        self.watched.pop(key, None)
        if shiboken6.isValid(self):
            self._rewatch()

    def _rewatch(self) -> None:
        current = set(self.watcher.files())
        wanted = {str(p) for w in self.watched.values() for p in w.files() if p.exists()}
        if current - wanted:
            self.watcher.removePaths(sorted(current - wanted))
        if wanted - current:
            self.watcher.addPaths(sorted(wanted - current))

    def _on_saved(self, tab) -> None:  # noqa: ANN001
        entry = self.watched.get(id(tab))
        if entry is not None:
            entry.remember()
            self._update_bar(tab)
            self._rewatch()

    # -- detection ---------------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.WindowActivate:
            self._schedule()
        return False

    def _schedule(self, *_a) -> None:  # noqa: ANN002
        self._timer.start()

    def check_all(self) -> None:
        for entry in list(self.watched.values()):
            if shiboken6.isValid(entry.tab):
                self.check(entry.tab)
        self._rewatch()  # files replaced by rename are new inodes: watch them again

    def check(self, tab) -> set[Path]:  # noqa: ANN001
        """The files of ``tab`` changed on disk since read or saved (updates the bar)."""
        entry = self.watched.get(id(tab))
        if entry is None:
            return set()
        for path, known in entry.known.items():
            if identity(path) != known:
                entry.changed.add(path)
        self._update_bar(tab)
        return set(entry.changed)

    def _update_bar(self, tab) -> None:  # noqa: ANN001
        entry = self.watched.get(id(tab))
        if entry is None or not shiboken6.isValid(entry.bar):
            return
        if not entry.changed:
            entry.bar.hide()
            return
        names = ", ".join(sorted(p.name for p in entry.changed))
        if tab.doc.is_modified:
            entry.bar.label.setText(f"{names} changed on disk. You have unsaved edits: saving will "
                                    "overwrite the newer file (you will be asked first).")
            entry.bar.reload_button.hide()
        else:
            entry.bar.label.setText(f"{names} changed on disk since it was opened.")
            entry.bar.reload_button.show()
        entry.bar.show()

    def _dismiss(self, tab) -> None:  # noqa: ANN001
        entry = self.watched.get(id(tab))
        if entry is not None:
            entry.bar.hide()

    # -- actions -------------------------------------------------------------------------
    def reload(self, tab) -> None:  # noqa: ANN001
        """Close the tab and open its file again (only for a document without edits)."""
        if tab.doc.is_modified or tab.doc.path is None:
            return
        path = tab.doc.path
        index = self.window.tabs.indexOf(tab)
        if index >= 0:
            self.window.close_tab(index)
        self.window.open_path(path)

    def confirm_overwrite(self, tab, target: Path | None = None) -> bool:  # noqa: ANN001
        """Before saving ``tab`` to ``target`` (its own file by default): True to go on.
        Asks when that file or a data file changed on disk since it was read."""
        changed = self.check(tab)
        target = target or tab.doc.path
        if not changed or target is None:
            return True
        if target != tab.doc.path and target not in changed:
            return True  # a Save As elsewhere overwrites nothing that changed
        names = ", ".join(sorted(p.name for p in changed))
        answer = QMessageBox.question(
            self.window, "File changed on disk",
            f"{names} changed on disk since it was read. Save anyway and overwrite the newer file?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Save


def install_file_watch(window) -> FileWatch:  # noqa: ANN001
    window.file_watch = FileWatch(window)
    return window.file_watch
