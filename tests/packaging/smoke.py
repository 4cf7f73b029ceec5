"""One smoke check of an installed ``onnx-studio`` command, shared by the wheel and the bundle
tests: every subcommand and the window, from a clean environment, outside the source tree.

The environment is what ``env -i`` leaves plus PATH, HOME and the offscreen Qt platform, and
the working folder is a temporary one: the program must find everything it needs (sample
model, icons, onnx's data, onnxruntime, Qt's plugins) inside its own installation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import onnx
from PySide6.QtGui import QImage

SCRIPT = """\
for name in doc.inputs():
    doc.execute(commands.SetDimension(doc.main, name, 0, "batch"))
doc.set_metadata("edited_by", "onnx-studio bundle test")
"""


def clean_env(home: Path, *, display: bool = False) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    if not display:
        env["QT_QPA_PLATFORM"] = "offscreen"
    return env


class Installed:
    """Runs ``exe`` (an ``onnx-studio`` executable) in a clean environment inside ``work``."""

    def __init__(self, exe: Path, work: Path) -> None:
        self.exe, self.work = exe, work
        (work / "home").mkdir(exist_ok=True)

    def __call__(self, *args: str, timeout: float = 180, display: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.exe), *args], capture_output=True, text=True, timeout=timeout,
                              env=clean_env(self.work / "home", display=display), cwd=self.work)

    def ok(self, *args: str, **kw) -> subprocess.CompletedProcess:
        proc = self(*args, **kw)
        assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc


def screenshot_is_a_window(path: Path) -> None:
    image = QImage(str(path))
    assert not image.isNull() and image.width() >= 1000 and image.height() >= 600
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 30  # boxes, text, panels: not a blank window


def check_every_command(app: Installed, sample: Path) -> None:
    """The window on the bundled sample (no model argument), then every subcommand on it."""
    work = app.work
    shot = work / "shot.png"
    app.ok("--screenshot", str(shot))  # no MODEL: the sample shipped inside the installation
    screenshot_is_a_window(shot)

    info = json.loads(app.ok("info", str(sample), "--json").stdout)
    assert info["nodes"] > 0 and info["graph_name"]  # onnx's protobuf classes came along
    assert "tf2onnx" in app.ok("info", str(sample)).stdout
    app.ok("check", str(sample))
    app.ok("check", "--full", str(sample))

    output = onnx.load(str(sample), load_external_data=False).graph.output[0].name  # whatever the sample is
    ran = app.ok("run", str(sample), "--random", "--save", str(work / "outputs"))  # the child process
    assert output in ran.stdout and (work / "outputs" / f"{output}.npy").is_file()
    # the reference evaluator came along too; on a small model of its own, since onnx's
    # evaluator cannot run every real model (it fails on a Squeeze of the Magika sample)
    tiny = work / "tiny.onnx"
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), str(tiny))
    ref = app.ok("run", str(tiny), "--random", "--backend", "reference")
    assert "backend: reference" in ref.stdout and "y" in ref.stdout

    for suffix in (".png", ".svg"):
        out = work / f"graph{suffix}"
        app.ok("render", str(sample), "-o", str(out))
        assert out.stat().st_size > 1000
    assert not QImage(str(work / "graph.png")).isNull()

    part = work / "part.onnx"
    app.ok("extract", str(sample), "-o", str(part), "--nodes", "#0", "#1")
    assert part.stat().st_size > 0
    assert app("diff", str(sample), str(sample)).returncode == 0
    assert app("diff", str(sample), str(part)).returncode == 1

    script = work / "edit.py"
    script.write_text(SCRIPT)
    edited = work / "edited.onnx"
    app.ok("script", str(script), str(sample), "-o", str(edited))
    assert "onnx-studio bundle test" in app.ok("info", str(edited)).stdout
    app.ok("convert", str(sample), str(work / "sample.onnxtxt"), "--text")

    ran_shot = work / "ran.png"
    app.ok(str(sample), "--run", "--screenshot", str(ran_shot))  # the Run dock in the window
    screenshot_is_a_window(ran_shot)


def check_errors_are_one_line(app: Installed) -> None:
    bad = app.work / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    for args in (("info", str(bad)), ("run", str(bad), "--random"), (str(bad), "--screenshot", "x.png")):
        proc = app(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert [line for line in proc.stderr.splitlines() if line.startswith("error:")], proc.stderr
    # the window without a display: one line that says so (not Qt's abort)
    proc = app(display=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "display" in lines[0], proc.stderr
