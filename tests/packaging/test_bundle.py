"""The PyInstaller desktop bundle (``make bundle``; marker ``bundle``, not in the default run):
from a clean environment, the window on the bundled sample, every subcommand — ``run`` in the
runtime's child process, which re-executes the frozen program — and the Run dock in the
window; the release tarball (``make release``) installs its desktop entry and MIME type.

``ONNX_STUDIO_BUNDLE`` points at another bundle folder (default ``dist/onnx-studio``)."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.packaging.smoke import Installed, check_errors_are_one_line, check_every_command, clean_env

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = Path(os.environ.get("ONNX_STUDIO_BUNDLE", ROOT / "dist" / "onnx-studio"))

pytestmark = [pytest.mark.bundle, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def exe() -> Path:
    path = BUNDLE / "onnx-studio"
    if not path.is_file():
        pytest.fail(f"no bundle at {BUNDLE}: build it with `make bundle`")
    return path


def bundled_sample(bundle: Path) -> Path:
    (sample,) = bundle.glob("**/resources/magika_standard_v3_3.onnx")
    return sample


def test_every_command_in_the_bundle(exe, tmp_path):
    sample = tmp_path / "sample.onnx"
    shutil.copy2(bundled_sample(exe.parent), sample)  # the bundle carries resources/
    check_every_command(Installed(exe, tmp_path), sample)


def test_errors_in_the_bundle_are_one_line(exe, tmp_path):
    check_errors_are_one_line(Installed(exe, tmp_path))


def test_release_tarball_installs_menu_entry_and_mime_type(exe, tmp_path):
    tarballs = sorted((ROOT / "dist").glob("onnx-studio-*-linux-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if not tarballs:
        pytest.fail("no release tarball in dist/: build it with `make release`")
    with tarfile.open(tarballs[-1]) as tar:
        tar.extractall(tmp_path / "x", filter="tar")
    (top,) = (tmp_path / "x").iterdir()
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home)
    proc = subprocess.run(["sh", str(top / "install.sh")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = home / ".local" / "share"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(data / "applications" / "onnx-studio.desktop")
    exec_line = entry["Desktop Entry"]["Exec"]
    assert exec_line.split()[0].strip('"') == str(top / "onnx-studio") and "%F" in exec_line
    assert (data / "mime" / "packages" / "onnx-studio-mime.xml").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "onnx-studio.svg").is_file()
    link = home / ".local" / "bin" / "onnx-studio"
    version = subprocess.run([str(link), "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and "onnx-studio" in version.stdout, version.stderr
    # ... and the program the menu entry starts opens the window on a model
    shot = tmp_path / "shot.png"
    model = tmp_path / "m.onnx"
    shutil.copy2(bundled_sample(top), model)
    opened = subprocess.run([exec_line.split()[0].strip('"'), str(model), "--screenshot", str(shot)],
                            capture_output=True, text=True, env=env, timeout=180, cwd=tmp_path)
    assert opened.returncode == 0 and shot.is_file(), opened.stderr
    uninstall = subprocess.run(["sh", str(top / "install.sh"), "--uninstall"], capture_output=True, text=True,
                               env=env, timeout=120)
    assert uninstall.returncode == 0, uninstall.stderr
    assert not (data / "applications" / "onnx-studio.desktop").exists() and not link.exists()
