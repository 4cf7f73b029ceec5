"""Ray is optional: without it the editor and the CLI import and work, and asking for the
ray backend is one ``error:`` line that says how to install it. Runs with or without Ray
installed (a child process hides it by making ``import ray`` fail)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import CORPUS

HIDE_RAY = "import sys; sys.modules['ray'] = None; "


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE_RAY + code], capture_output=True, text=True, timeout=120)


def test_editor_imports_without_ray() -> None:
    done = _python("import editor.runtime.remote, editor.cli.run, editor.cli.compare, editor.cli.reduce, "
                   "editor.debug; from editor.runtime.remote import ray_available, ClusterConfig; "
                   "print(ClusterConfig().address)")
    assert done.returncode == 0, done.stderr


def test_cli_says_how_to_install_ray() -> None:
    model = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    for command in (["run", str(model), "--random"], ["compare", str(model)],
                    ["reduce", str(model), "--check", "nan", "-o", "/tmp/never-written.onnx"]):
        done = _python("from editor.cli import main; sys.exit(main(" + repr([*command, "--backend", "ray",
                                                                         "--cluster", "127.0.0.1:1"]) + "))")
        assert done.returncode != 0
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "onnx-studio[ray]" in lines[0], done.stderr


def test_cluster_options_need_the_ray_backend() -> None:
    from editor.cli import main

    model = CORPUS / "real" / "fw_silero_vad_v6.onnx"
    assert main(["run", str(model), "--random", "--cluster", "127.0.0.1:1"]) == 2
