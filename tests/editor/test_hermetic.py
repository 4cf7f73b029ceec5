"""The test session never touches the user's real state (settings, recovery files, caches)."""

from __future__ import annotations

import os
import subprocess
import sys

from editor.recovery import RecoveryStore, default_recovery_dir
from tests.conftest import ROOT, TEST_HOME, XDG_DIRS


def test_xdg_folders_point_into_the_session_home() -> None:
    for var, path in XDG_DIRS.items():
        assert os.environ[var] == str(path)
        assert path.is_relative_to(TEST_HOME)


def test_recovery_store_defaults_inside_the_session_home() -> None:
    assert default_recovery_dir().is_relative_to(TEST_HOME)
    assert RecoveryStore().directory.is_relative_to(TEST_HOME)


def test_qt_settings_and_standard_paths_inside_the_session_home() -> None:
    # in a child process: QCoreApplication must not be created in this (Qt-free) test process
    code = """
from PySide6.QtCore import QCoreApplication, QSettings, QStandardPaths
from widgets.settings.store import APPLICATION, ORGANIZATION
app = QCoreApplication([])
print(QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION).fileName())
for loc in (QStandardPaths.AppConfigLocation, QStandardPaths.AppDataLocation, QStandardPaths.CacheLocation):
    print(QStandardPaths.writableLocation(loc))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, check=True).stdout
    for line in out.splitlines():
        assert line.startswith(str(TEST_HOME)), line
