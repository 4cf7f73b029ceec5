"""When the window cannot start (no display, Qt or one of its system libraries missing), the
app prints one ``error:`` line saying what is missing and how to get it and exits 2: never a
traceback, never Qt's abort (SIGABRT and a core dump). The subcommands work without Qt."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from resources import sample_model_path
from widgets.window import qt_startup
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(sample_model_path())

# Stands in for a machine without PySide6: every import of it fails.
NO_QT = textwrap.dedent("""
    import sys

    class NoQt:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("PySide6", "shiboken6"):
                raise ModuleNotFoundError(f"No module named {name!r}")

    if __name__ == "__main__":
        sys.meta_path.insert(0, NoQt())
        from widgets.cli import main
        sys.exit(main(sys.argv[1:]))
""")


def _app(*args: str, env: dict[str, str], script: Path | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    base["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, str(script)] if script else [sys.executable, "-m", "widgets"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, env={**base, **env}, cwd=ROOT)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == qt_startup.EXIT_NO_GUI, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_no_display_says_so_and_what_works_without_one():
    line = _one_error_line(_app(SAMPLE, env={}))
    assert "display" in line and "--screenshot" in line


def test_unknown_platform_plugin_is_one_line_not_an_abort():
    # Qt's own fatal start-up error (the path a missing library or a refused display takes)
    line = _one_error_line(_app(SAMPLE, env={"QT_QPA_PLATFORM": "nosuchplatform"}))
    assert "nosuchplatform" in line and "offscreen" in line  # names what exists


def test_display_that_cannot_be_used_is_one_line():
    # a display number nobody serves: either the xcb plugin's libraries are missing here
    # (then the line names the packages) or the plugin loads and cannot connect
    free = next(n for n in range(97, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    line = _one_error_line(_app(SAMPLE, env={"DISPLAY": f":{free}", "QT_QPA_PLATFORM": "xcb"}))
    assert "apt-get install" in line or f":{free}" in line


def test_missing_qt_is_one_line_and_the_subcommands_still_work(tmp_path):
    script = tmp_path / "no_qt.py"
    script.write_text(NO_QT)
    line = _one_error_line(_app(SAMPLE, env={"DISPLAY": ":0"}, script=script))
    assert "PySide6" in line and "pip install" in line
    info = _app("info", SAMPLE, env={}, script=script)
    assert info.returncode == 0 and "tf2onnx" in info.stdout, info.stderr
    check = _app("check", SAMPLE, env={}, script=script)
    assert check.returncode == 0, check.stderr
    ran = _app("run", SAMPLE, "--random", env={}, script=script)  # its child process has no Qt either
    assert ran.returncode == 0 and "target_label" in ran.stdout, ran.stderr


def test_missing_library_named_with_its_package():
    message = "libEGL.so.1: cannot open shared object file: No such file or directory"
    assert qt_startup.missing_library_in(message) == "libEGL.so.1"
    assert qt_startup.debian_package("libEGL.so.1") == "libegl1"
    # Debian's naming rule for the ones not listed
    assert qt_startup.debian_package("libxcb-foo.so.0") == "libxcb-foo0"
    assert qt_startup.debian_package("libbar-2.so.5.1") == "libbar-2-5"
    assert "sudo apt-get install libegl1 libxkbcommon0" in qt_startup.install_hint(
        ["libEGL.so.1", "libxkbcommon.so.0", "libEGL.so.1"])


def test_diagnosis_names_every_library_each_plugin_lacks(monkeypatch, tmp_path):
    lacks = {"libqwayland.so": ["libwayland-cursor.so.0"], "libqxcb.so": ["libxcb-icccm.so.4"]}
    monkeypatch.setattr(qt_startup, "missing_libraries", lambda path: lacks.get(path.name, []))
    messages = [
        'Could not load the Qt platform plugin "wayland" in "" even though it was found.',
        "From 6.5.0, xcb-cursor0 or libxcb-cursor0 is needed to load the Qt xcb platform plugin.",
        'Could not load the Qt platform plugin "xcb" in "" even though it was found.',
        "This application failed to start because no Qt platform plugin could be initialized.",
    ]
    line = qt_startup.diagnose(messages, tmp_path)
    assert "wayland needs libwayland-cursor.so.0" in line
    assert "xcb needs libxcb-icccm.so.4, libxcb-cursor.so.0" in line  # the run-time dlopen too
    assert "apt-get install libwayland-cursor0 libxcb-icccm4 libxcb-cursor0" in line
    refused = qt_startup.diagnose(['could not connect to display :7', "failed to start"], tmp_path)
    assert ":7" in refused and "--screenshot" in refused


@pytest.mark.parametrize(("env", "needs_display"), [
    ({}, True),
    ({"QT_QPA_PLATFORM": "xcb"}, True),
    ({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, True),
    ({"DISPLAY": ":0"}, False),
    ({"WAYLAND_DISPLAY": "wayland-0"}, False),
    ({"QT_QPA_PLATFORM": "offscreen"}, False),
    ({"QT_QPA_PLATFORM": "vnc:size=800x600"}, False),
])
def test_display_check(env, needs_display):
    if needs_display:
        with pytest.raises(qt_startup.QtStartupError, match="display"):
            qt_startup.check_display(env, "linux")
    else:
        qt_startup.check_display(env, "linux")
    qt_startup.check_display(env, "win32")  # other systems always have their window system


@pytest.mark.skipif(shutil.which("dpkg-query") is None or shutil.which("ldconfig") is None,
                    reason="not a Debian-family system: no dpkg to check package names against")
def test_package_names_are_the_ones_that_ship_the_libraries():
    """Every listed library present on this machine comes from the package we name."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    paths = dict(re.findall(r"^\s*(\S+) \([^)]*x86-64[^)]*\) => (\S+)", out, flags=re.MULTILINE))
    paths = paths or dict(re.findall(r"^\s*(\S+) \(.*\) => (\S+)", out, flags=re.MULTILINE))
    present = {lib: paths[lib] for lib in qt_startup.DEBIAN_PACKAGES if lib in paths}
    if len(present) < 3:
        pytest.skip(f"only {len(present)} of Qt's system libraries are installed here")
    checked = 0
    for lib, path in present.items():
        owner = subprocess.run(["dpkg-query", "-S", os.path.realpath(path)], capture_output=True, text=True)
        if owner.returncode != 0:
            continue  # not from a package (built by hand, or a usrmerge path dpkg does not know)
        packages = {p.split(":")[0] for p in owner.stdout.split(": ")[0].split(", ")}
        expected = qt_startup.DEBIAN_PACKAGES[lib]
        # Ubuntu 24.04 renamed some for the 64-bit time_t transition (libglib2.0-0t64)
        assert expected in packages or f"{expected}t64" in packages, (lib, packages)
        checked += 1
    assert checked >= 3


def test_pysides_module_question_is_answered_from_namespaces_with_the_same_answer():
    """PySide6 asks of each module imported after it whether it uses PySide6 (its answer:
    the source file names it). The app answers from the module's namespace instead: the
    same answer for every module of ours that imports Qt, and for the Qt-free core."""
    import importlib
    import pkgutil

    import editor
    import widgets

    qt_startup.import_qt()
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and hasattr(feature, "_mod_uses_pyside"):
        assert feature._mod_uses_pyside is qt_startup.uses_pyside, "the app's answer was not installed"
    checked = 0
    for package, uses in ((widgets, True), (editor, False)):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue  # (runs the app when imported)
            module = importlib.import_module(info.name)
            source = Path(module.__file__).read_text(encoding="utf-8")
            imports_qt = re.search(r"^(from|import) (PySide6|shiboken6)", source, re.M) is not None
            if imports_qt or not uses:  # (a widgets module may import Qt only inside functions)
                assert qt_startup.uses_pyside(module) is imports_qt, info.name
                checked += 1
    assert checked > 200
