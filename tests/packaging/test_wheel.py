"""The wheel users install: it carries every module and resources/ (sample model, icon), and
declares the ``onnx-studio`` command; installed into a fresh virtual environment (marker
``wheel``: ~1 min, not in the default run) that command works from a clean environment,
away from the source tree: the window on the bundled sample, every subcommand, one-line errors.
``pipx install .`` does the same (builds this wheel, installs it into a fresh venv)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.packaging.smoke import Installed, check_errors_are_one_line, check_every_command

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "dev.txt"
#: what a source distribution holds: all a wheel is built from
SOURCES = ("pyproject.toml", "README.md", "editor", "widgets", "resources")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (the checkout is left untouched), with the
    locked setuptools already in this environment: no network."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(src)], check=True, capture_output=True, timeout=300)
    (found,) = out.glob("onnx_studio-*.whl")
    return found


def test_wheel_carries_every_module_resource_and_the_command(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in ("editor", "widgets", "resources"):
        for path in (ROOT / package).rglob("*"):
            # resources/screenshots holds the README's pictures, not something the app reads
            if path.is_file() and "__pycache__" not in path.parts and "screenshots" not in path.parts:
                rel = path.relative_to(ROOT).as_posix()
                assert rel in names, f"{rel} is not in the wheel"
    assert {"resources/magika_standard_v3_3.onnx", "resources/onnx-studio.svg"} <= names
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert re.search(r"^onnx-studio\s*=\s*widgets\.cli:main$", text, flags=re.MULTILINE), text
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    requires = zipfile.ZipFile(wheel).read(metadata).decode()
    # the window after a plain install: Qt is a default dependency, not behind an extra
    assert re.search(r"^Requires-Dist: PySide6-Essentials[^;]*$", requires, flags=re.MULTILINE), requires
    assert not any(n.startswith(("tests/", "packaging/")) for n in names)


def locked_constraints(path: Path) -> Path:
    """The lock's exact versions (with their environment markers) as a pip constraints file."""
    lines = [m.group(1).strip() for m in re.finditer(r"^([A-Za-z0-9_.-]+==[^\\\n]+?)\s*\\?$", LOCK.read_text(),
                                                     flags=re.MULTILINE)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.wheel
@pytest.mark.timeout(900)
def test_fresh_venv_from_the_wheel_runs_everything(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "-c", str(locked_constraints(tmp_path / "c.txt")),
                    str(wheel)], check=True, capture_output=True, timeout=800)
    exe = env_dir / "bin" / "onnx-studio"
    work = tmp_path / "work"
    work.mkdir()
    app = Installed(exe, work)
    # the sample model the installed package found for itself
    where = subprocess.run([str(py), "-c", "from resources import sample_model_path as p; print(p())"],
                           capture_output=True, text=True, check=True, cwd=work).stdout.strip()
    sample = Path(where)
    assert sample.is_file() and env_dir in sample.parents, sample  # not the checkout's copy
    copy = work / "sample.onnx"
    shutil.copy2(sample, copy)
    check_every_command(app, copy)
    check_errors_are_one_line(app)
