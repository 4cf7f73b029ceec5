"""Why the window cannot open, in one ``error:`` line: no display, or Qt's system libraries.

A plain ``pip install onnx-studio`` brings Qt, but Qt's platform plugins load shared
libraries of the system (libEGL, libxkbcommon, the xcb family) and need a display. When one
is missing Qt prints several lines of its own and then aborts the process (SIGABRT, a core
dump) from inside ``QApplication``'s constructor, where no Python ``except`` reaches. So:

- :func:`import_qt` turns a failed ``import PySide6.QtWidgets`` into a :class:`QtStartupError`
  naming the missing library and its Debian/Ubuntu package;
- :func:`check_display` refuses early when no display is set and the platform needs one;
- :func:`fatal_guard` catches Qt's own fatal message while the application is created,
  works out what was missing (``ldd`` on the platform plugin) and exits with one line.

This module imports no Qt at module level: it must work when Qt itself cannot be imported.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

#: exit status when the window cannot start (the CLI's "cannot read" status is 2 as well)
EXIT_NO_GUI = 2


#: the shared libraries Qt's widgets and its xcb/wayland plugins load, and the Debian/Ubuntu
#: package of each (tests/widgets/test_qt_startup.py checks these against dpkg where it can)
DEBIAN_PACKAGES: dict[str, str] = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libOpenGL.so.0": "libopengl0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}

#: what still works without a window (PySide6 is not needed by the subcommands)
SUBCOMMANDS_HINT = "the subcommands (onnx-studio info|check|run|render ...) work without it"
#: ... and without a display (the offscreen platform needs Qt, but no display)
NO_DISPLAY_HINT = "the subcommands (onnx-studio info|check|run|render ...) and --screenshot work without one"


class QtStartupError(Exception):
    """The window cannot start; ``str(exc)`` is the one line to print after ``error: ``."""


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package that ships ``soname`` (a known one, else Debian's naming rule:
    ``libfoo-bar.so.3`` is in ``libfoo-bar3``, ``libfoo-1.so.3`` in ``libfoo-1-3``)."""
    if soname in DEBIAN_PACKAGES:
        return DEBIAN_PACKAGES[soname]
    m = re.fullmatch(r"(lib.+?)\.so\.(\d+)(?:\.\d+)*", soname)
    if not m:
        return soname
    stem, major = m.group(1).lower().replace("_", "-"), m.group(2)
    return f"{stem}-{major}" if stem[-1].isdigit() else f"{stem}{major}"


def install_hint(sonames: list[str]) -> str:
    packages = list(dict.fromkeys(debian_package(s) for s in sonames))
    return f"on Debian/Ubuntu: sudo apt-get install {' '.join(packages)}"


def missing_library_in(message: str) -> str | None:
    """The library a loader error names (``libEGL.so.1: cannot open shared object file``)."""
    m = re.search(r"([\w.+-]+\.so(?:\.\d+)*): cannot open shared object file", message)
    return m.group(1) if m else None


def import_qt() -> None:
    """Import the Qt modules the window needs, or raise :class:`QtStartupError` saying why."""
    try:
        import PySide6.QtGui  # noqa: F401
        import PySide6.QtWidgets  # noqa: F401
    except ModuleNotFoundError as exc:
        raise QtStartupError(
            f"the window needs PySide6, which is not installed ({exc}): pip install 'PySide6-Essentials>=6.6' "
            f"(or reinstall onnx-studio); {SUBCOMMANDS_HINT}") from None
    except ImportError as exc:
        lib = missing_library_in(str(exc))
        if lib is None:
            raise QtStartupError(f"Qt cannot be loaded: {exc}") from None
        raise QtStartupError(f"Qt cannot be loaded: the system library {lib} is missing ({install_hint([lib])}); "
                             f"{SUBCOMMANDS_HINT}") from None
    _answer_feature_check_from_namespaces()


def _answer_feature_check_from_namespaces() -> None:
    """Answer PySide6's question about each new module from the module's namespace.

    NOTE: once imported, PySide6 asks of every module imported after it whether it uses
    PySide6 (``shibokensupport.feature._mod_uses_pyside``) by reading and tokenizing its
    source file: 0.16 ms a module, 66 ms before the 11.8k-node export's first picture (402
    modules: our own, numpy's lazy parts, the standard library). The answer only tells
    which modules may select a ``__feature__`` (``snake_case``, ``true_property``); none of
    ours does. A module that uses PySide6 holds its classes or modules: the namespace says
    the same in a few microseconds. A PySide6 without this hook is left as it is."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        feature._mod_uses_pyside = uses_pyside


def uses_pyside(module: ModuleType) -> bool:
    """Whether ``module`` holds a PySide6 (or shiboken6) module, class or function."""
    for value in list(vars(module).values()):
        origin = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(origin, str) and origin.startswith(("PySide6", "shiboken6")):
            return True
    return False


def requested_platform(env: Mapping[str, str]) -> str | None:
    """The first platform plugin Qt will try (``QT_QPA_PLATFORM`` may list several, ``;``-separated,
    and carry options after ``:``); None when Qt chooses by itself."""
    value = env.get("QT_QPA_PLATFORM", "").strip()
    if not value:
        return None
    return value.split(";")[0].split(":")[0].strip() or None


def check_display(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> None:
    """Refuse (:class:`QtStartupError`) when the window would need a display and none is set."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return  # Windows and macOS always have their window system
    requested = requested_platform(env)
    if requested is not None and requested != "xcb" and not requested.startswith("wayland"):
        return  # headless (offscreen, vnc, eglfs ...) or one Qt will judge itself
    has_x = bool(env.get("DISPLAY"))
    has_wayland = bool(env.get("WAYLAND_DISPLAY"))
    if requested is not None and requested.startswith("wayland"):
        ok = has_wayland
    elif requested == "xcb":
        ok = has_x
    else:
        ok = has_x or has_wayland
    if not ok:
        raise QtStartupError(
            "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set): start it from a desktop "
            "session or with X forwarding (ssh -X), or run it under xvfb-run; " + NO_DISPLAY_HINT)


def missing_libraries(path: Path) -> list[str]:
    """Shared libraries ``path`` needs that the dynamic loader cannot find (``ldd``; [] without it)."""
    ldd = shutil.which("ldd")
    if ldd is None or not path.is_file():
        return []
    try:
        out = subprocess.run([ldd, str(path)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return list(dict.fromkeys(re.findall(r"^\s*(\S+) => not found", out, flags=re.MULTILINE)))


def diagnose(messages: list[str], plugins_dir: Path | None) -> str:
    """One line from Qt's start-up messages: what is missing, and how to get it."""
    text = "\n".join(messages)
    m = re.search(r'Could not find the Qt platform plugin "([^"]+)"', text)
    if m:
        avail = re.search(r"Available platform plugins are: ([^\n]*?)\.?$", text, flags=re.MULTILINE)
        have = f" (available: {avail.group(1)})" if avail else ""
        return f'Qt has no platform plugin "{m.group(1)}"{have}: check QT_QPA_PLATFORM'
    m = re.search(r"could not connect to display ?(\S*)", text)
    if m:
        shown = m.group(1) or os.environ.get("DISPLAY", "")
        return (f"cannot connect to the display {shown}: is the X server running and may this user use it "
                f"(xhost, XAUTHORITY)? " + NO_DISPLAY_HINT)
    failed = list(dict.fromkeys(re.findall(r'Could not load the Qt platform plugin "([^"]+)"', text)))
    if failed:
        needs: dict[str, list[str]] = {}
        for name in failed:  # Qt tries several in turn (wayland, then xcb): say what each lacks
            missing: list[str] = []
            if plugins_dir is not None:
                missing = missing_libraries(plugins_dir / "platforms" / f"libq{name}.so")
            if name == "xcb" and "xcb-cursor" in text and "libxcb-cursor.so.0" not in missing:
                missing.append("libxcb-cursor.so.0")  # the plugin loads it at run time: ldd cannot see it
            needs[name] = missing
        every = [lib for libs in needs.values() for lib in libs]
        if not every:
            return (f"Qt's {' and '.join(failed)} platform plugin cannot load (run with QT_DEBUG_PLUGINS=1 to see "
                    f"why); {SUBCOMMANDS_HINT}")
        said = "; ".join(f"{name} needs {', '.join(libs)}" for name, libs in needs.items() if libs)
        return f"Qt's platform plugin cannot load, system libraries are missing: {said} ({install_hint(every)})"
    last = messages[-1].splitlines()[0] if messages else "unknown error"
    return f"Qt cannot start: {last}"


@contextlib.contextmanager
def fatal_guard() -> Iterator[None]:
    """While the QApplication is created: turn Qt's fatal start-up error into one ``error:`` line
    and exit :data:`EXIT_NO_GUI` (Qt would abort the process right after its message). Qt's
    other messages of that moment are held back and shown afterwards when start-up succeeds."""
    from PySide6.QtCore import QLibraryInfo, QtMsgType, qInstallMessageHandler

    held: list[str] = []

    def handler(kind, _context, message: str) -> None:
        if kind != QtMsgType.QtFatalMsg:
            held.append(message)
            return
        held.append(message)
        plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
        print(f"error: {diagnose(held, plugins)}", file=sys.stderr, flush=True)
        os._exit(EXIT_NO_GUI)  # Qt aborts after a fatal message; leave first, without a core dump

    previous = qInstallMessageHandler(handler)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)
        for message in held:
            print(message, file=sys.stderr)
