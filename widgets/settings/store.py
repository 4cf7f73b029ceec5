"""Settings kept between runs (QSettings): window layout, recent files, theme, view options,
keyboard shortcuts the user rebound.

Stored as an INI file in the user's config folder (``QSettings.IniFormat``, user scope) so
tests can point it elsewhere with ``QSettings.setPath(IniFormat, UserScope, tmp)``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from widgets.common.formatting import path_for_qt, path_from_qt

ORGANIZATION = "ONNX Studio"
APPLICATION = "onnx-studio"
MAX_RECENT = 12

#: View menu toggles and their defaults
VIEW_DEFAULTS = {"show_names": False, "show_attributes": True, "show_shapes": True, "show_initializers": True,
                 "show_minimap": True}


class Settings:
    """Typed access to the app's QSettings."""

    def __init__(self) -> None:
        self._qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)

    @property
    def file_name(self) -> str:
        return self._qs.fileName()

    def sync(self) -> None:
        self._qs.sync()

    # -- recent files ---------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self._qs.value("recent/files", [])
        if isinstance(value, str):  # QSettings returns a bare string for one-item lists
            value = [value]
        return [path_from_qt(str(v)) for v in (value or []) if v]

    def add_recent(self, path: str | Path) -> list[str]:
        path = str(Path(path).resolve())
        files = [p for p in self.recent_files() if p != path]
        files.insert(0, path)
        del files[MAX_RECENT:]
        self._qs.setValue("recent/files", [path_for_qt(p) for p in files])
        return files

    def remove_recent(self, path: str) -> None:
        self._qs.setValue("recent/files", [path_for_qt(p) for p in self.recent_files() if p != path])

    def clear_recent(self) -> None:
        self._qs.setValue("recent/files", [])

    # -- window ---------------------------------------------------------------------------
    def window_state(self) -> tuple[QByteArray | None, QByteArray | None]:
        geometry = self._qs.value("window/geometry")
        state = self._qs.value("window/state")
        return (geometry if isinstance(geometry, QByteArray) else None,
                state if isinstance(state, QByteArray) else None)

    def save_window_state(self, geometry: QByteArray, state: QByteArray) -> None:
        self._qs.setValue("window/geometry", geometry)
        self._qs.setValue("window/state", state)

    # -- appearance -----------------------------------------------------------------------
    def theme(self) -> str:
        """``"system"`` (follow the OS), ``"light"`` or ``"dark"``."""
        value = str(self._qs.value("appearance/theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, theme: str) -> None:
        self._qs.setValue("appearance/theme", theme)

    def view_option(self, name: str) -> bool:
        value = self._qs.value(f"view/{name}", VIEW_DEFAULTS.get(name, False))
        return value in (True, "true", "1", 1)

    def set_view_option(self, name: str, on: bool) -> None:
        self._qs.setValue(f"view/{name}", bool(on))

    def last_dir(self) -> str:
        return str(self._qs.value("files/last_dir", ""))

    def set_last_dir(self, folder: str) -> None:
        self._qs.setValue("files/last_dir", folder)

    # -- keyboard shortcuts ---------------------------------------------------------------
    def shortcuts(self) -> dict[str, str]:
        """Action id -> key sequence (portable text; ``""``: no key) the user chose in
        place of the action's default."""
        self._qs.beginGroup("shortcuts")
        try:
            return {key: str(self._qs.value(key, "")) for key in self._qs.childKeys()}
        finally:
            self._qs.endGroup()

    def set_shortcut(self, action_id: str, keys: str | None) -> None:
        """Store the user's key for ``action_id`` (``None``: back to the default)."""
        name = "shortcuts/" + action_id
        if keys is None:
            self._qs.remove(name)
        else:
            self._qs.setValue(name, keys)
