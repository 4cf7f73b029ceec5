"""Fuzzing the readers: mutated real models through info, check, convert, render and the
window's open. The promise checked: no crash, no hang, no traceback, ever.

    python -m tests.fuzz.harness --count 1000 [--seed 0] [--jobs 2] [--keep DIR]

Mutations (deterministic from the seed): byte flips, truncation, a corrupted string (bytes
that are not UTF-8, control characters), and proto-level edits of element types (tensor
data type 999, input elem type 77), dims (negative, huge) and names (empty, 1 MB). Seeds are
the corpus's real models and a slice of the ONNX backend tests.

Each model runs in a worker process (spawn; offscreen Qt) that calls the CLI in-process and
opens the model in a MainWindow. The parent kills a worker that takes longer than
``--timeout`` on one model (a hang) and notices one that dies (a crash); either way the
model is kept (``--keep``) and a fresh worker goes on. A command's failure is fine when it
is one ``error:`` line and a non-zero exit; "unexpected", "Traceback" or an exception that
reached Qt's event loop is a finding.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"


def corpus_dir() -> Path:
    return Path(os.environ.get("ONNX_STUDIO_CORPUS", ROOT.parent / "shared" / "corpus"))


def seed_models(limit_backend: int = 40) -> list[Path]:
    corpus = corpus_dir()
    real = sorted((corpus / "real").glob("*.onnx"))
    backend = sorted((corpus / "onnx-backend" / "node").glob("*/model.onnx"))
    step = max(1, len(backend) // limit_backend)
    return real + backend[::step][:limit_backend]


# ----------------------------------------------------------------------------- mutations


def _proto_mutation(data: bytes, rng: random.Random) -> bytes | None:
    try:
        return _proto_edit(data, rng)
    except (ValueError, TypeError):  # an edit protobuf refuses: pick another mutation
        return None


def _proto_edit(data: bytes, rng: random.Random) -> bytes | None:
    import onnx

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception:  # noqa: BLE001
        return None
    g = model.graph
    choice = rng.randrange(6)
    if choice == 0 and len(g.initializer):
        t = g.initializer[rng.randrange(len(g.initializer))]
        t.data_type = rng.choice([999, 0, 8, 16, 23, 40, rng.randrange(1, 30)])
    elif choice == 1 and len(g.input):
        vi = g.input[rng.randrange(len(g.input))]
        vi.type.tensor_type.elem_type = rng.choice([77, 0, 999, 8])
    elif choice == 2 and len(g.initializer):
        t = g.initializer[rng.randrange(len(g.initializer))]
        if len(t.dims):
            t.dims[rng.randrange(len(t.dims))] = rng.choice([-1, 0, 2**40, 7, 2**62])
        else:
            t.dims.append(rng.choice([-5, 3, 2**31]))
    elif choice == 3 and len(g.node):
        n = g.node[rng.randrange(len(g.node))]
        which = rng.randrange(4)
        if which == 0:
            n.op_type = ""
        elif which == 1:
            n.name = "x" * 1_000_000
        elif which == 2:
            n.name = "bad\nname\x1b[0m\x00"
        elif len(n.input):
            n.input[rng.randrange(len(n.input))] = rng.choice(["", "\x07", "y" * 5000])
    elif choice == 4 and len(g.input):
        vi = g.input[rng.randrange(len(g.input))]
        dims = vi.type.tensor_type.shape.dim
        if len(dims):
            dims[rng.randrange(len(dims))].dim_value = rng.choice([-3, 2**62, 0])
    elif choice == 5 and len(g.node):
        n = g.node[rng.randrange(len(g.node))]
        if len(n.attribute):
            a = n.attribute[rng.randrange(len(n.attribute))]
            a.type = rng.choice([0, 1, 5, 11])  # UNDEFINED, FLOAT, GRAPH, SPARSE_TENSOR
    else:
        return None
    try:
        return model.SerializeToString()
    except Exception:  # noqa: BLE001
        return None


def _string_mutation(data: bytes, rng: random.Random) -> bytes | None:
    """Corrupt one byte inside a name-like string field (field tags of NodeProto)."""
    spots = []
    for tag in (b"\x0a", b"\x12", b"\x1a", b"\x22"):  # input, output, name, op_type
        start = 0
        for _ in range(200):
            i = data.find(tag, start)
            if i < 0 or i + 2 >= len(data):
                break
            length = data[i + 1]
            body = data[i + 2 : i + 2 + length]
            if 1 <= length < 0x80 and len(body) == length and all(0x20 <= b < 0x7F for b in body):
                spots.append((i + 2, length))
            start = i + 1
    if not spots:
        return None
    at, length = rng.choice(spots)
    pos = at + rng.randrange(length)
    byte = rng.choice([0xFF, 0xFE, 0xC3, 0x80, 0x0A, 0x1B, 0x00])
    return data[:pos] + bytes([byte]) + data[pos + 1 :]


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    for _ in range(10):
        kind = rng.choice(["flip", "flip", "truncate", "string", "string", "proto", "proto", "proto"])
        if kind == "flip":
            out = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(len(out))] = rng.randrange(256)
            return kind, bytes(out)
        if kind == "truncate":
            return kind, data[: rng.randrange(1, len(data))]
        mutated = _string_mutation(data, rng) if kind == "string" else _proto_mutation(data, rng)
        if mutated is not None and mutated != data:
            return kind, mutated
    return "flip", data[:-1]


# ----------------------------------------------------------------------------- worker


@dataclass
class Finding:
    path: str
    step: str
    what: str


@dataclass
class Report:
    models: int = 0
    commands: int = 0
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


def _cli(args: list[str]) -> tuple[int, str]:
    from editor.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli_main(args)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, err.getvalue()


def _problem(code: int, err: str) -> str | None:
    if "Traceback" in err or "unexpected" in err:
        return err.strip().splitlines()[-1][:300] if err.strip() else "traceback"
    if code not in (0, 1, 2):
        return f"exit code {code}"
    if code == 2 and not err.strip().startswith("error:"):
        return f"exit 2 without an error line: {err[:200]!r}"
    return None


class _Window:
    """One offscreen MainWindow per worker; opens a model and waits until shown or refused."""

    def __init__(self) -> None:
        from PySide6.QtWidgets import QApplication

        self.app = QApplication.instance() or QApplication(["fuzz"])
        from widgets.window.main_window import MainWindow
        from widgets.settings.store import Settings

        self.win = MainWindow(settings=Settings(), theme=None, sample=None)
        self.win.interactive_errors = False
        self.errors: list[str] = []
        sys.excepthook = lambda et, ev, tb: self.errors.append(f"{et.__name__}: {ev}"[:300])
        self.done = False
        self.win.modelShown.connect(self._done)
        self.win.loadFailed.connect(self._done)

    def _done(self, *_a) -> None:
        self.done = True

    def open(self, path: str, timeout: float) -> str | None:
        self.errors.clear()
        self.done = False
        self.win.open_path(path)
        end = time.monotonic() + timeout
        while not self.done and time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.005)
        for _ in range(20):  # panels update after the tab is shown
            self.app.processEvents()
        for tab in list(self.win.tab_list()):
            tab.doc.stack.set_clean()
            self.win.close_tab(self.win.tabs.indexOf(tab))
        self.app.processEvents()
        if self.errors:
            return "exception in the window: " + self.errors[0]
        if not self.done:
            return "the window's open never finished"
        return None


def worker_main(conn, out_dir: str, window: bool) -> None:  # noqa: ANN001
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = tempfile.mkdtemp(prefix="onnx-studio-fuzz-home-")  # never the user's settings or recovery files
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = os.path.join(home, var.lower())
    import warnings

    warnings.simplefilter("ignore")
    win = _Window() if window else None
    while True:
        item = conn.recv()
        if item is None:
            return
        path = item
        findings = []
        for step, args in (
            ("info", ["info", path]),
            ("check", ["check", path]),
            ("convert", ["convert", path, os.path.join(out_dir, "converted.onnx")]),
            ("render", ["render", path, "-o", os.path.join(out_dir, "render.svg")]),
        ):
            conn.send(("step", step))
            code, err = _cli(args)
            bad = _problem(code, err)
            if bad:
                findings.append((step, bad))
        if win is not None:
            conn.send(("step", "window"))
            bad = win.open(path, timeout=20)
            if bad:
                findings.append(("window", bad))
        conn.send(("done", findings))


def run(paths: list[Path], *, timeout: float, window: bool = True, keep: Path | None = None,
        log=print) -> Report:  # noqa: ANN001
    """Run every model of ``paths`` through the pipeline in a worker; returns the findings."""
    ctx = mp.get_context("spawn")
    report = Report()
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="onnx-studio-fuzz-"))
    proc = conn = None

    def start_worker():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=worker_main, args=(child, str(work), window), daemon=True)
        p.start()
        child.close()
        return p, parent

    try:
        for path in paths:
            if proc is None or not proc.is_alive():
                proc, conn = start_worker()
            conn.send(str(path))
            step = "start"
            outcome = None
            deadline = time.monotonic() + timeout + (60 if report.models == 0 else 0)  # first: imports
            while outcome is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    outcome = [(step, f"hang (over {timeout:.0f} s)")]
                    proc.kill()
                    proc.join()
                    proc = None
                    break
                if conn.poll(min(left, 0.5)):
                    try:
                        kind, value = conn.recv()
                    except (EOFError, OSError):
                        proc.join(5)
                        outcome = [(step, f"crash (worker exit code {proc.exitcode})")]
                        proc = None
                        break
                    if kind == "step":
                        step = value
                        deadline = time.monotonic() + timeout
                    else:
                        outcome = value
                elif not proc.is_alive():
                    outcome = [(step, f"crash (worker exit code {proc.exitcode})")]
                    proc = None
            report.models += 1
            report.commands += 5 if window else 4
            if report.models % 100 == 0:
                log(f"{report.models} models, {len(report.findings)} findings, "
                    f"{(time.monotonic() - start) / 60:.1f} min")
            for step_name, what in outcome:
                report.findings.append(Finding(str(path), step_name, what))
                log(f"FINDING {path.name}: {step_name}: {what}")
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, keep / path.name)
    finally:
        if proc is not None and proc.is_alive():
            try:
                conn.send(None)
                proc.join(5)
            except (OSError, ValueError):
                pass
            if proc.is_alive():
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    report.seconds = time.monotonic() - start
    return report


def mutated_models(count: int, seed: int, folder: Path) -> list[Path]:
    """``count`` mutated models written to ``folder`` (names say seed model and mutation)."""
    rng = random.Random(seed)
    seeds = [(p, p.read_bytes()) for p in seed_models()]
    out = []
    for i in range(count):
        src, data = seeds[i % len(seeds)]
        kind, blob = mutate(data, rng)
        stem = src.stem if src.parent.parent.name != "node" else src.parent.name
        path = folder / f"{seed}-{i:05d}-{kind}-{stem}.onnx"
        path.write_bytes(blob)
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.harness", description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one step may take before it is a hang")
    ap.add_argument("--keep", type=Path, default=ROOT / "fuzz-findings", help="where failing models are copied")
    ap.add_argument("--no-window", action="store_true", help="skip the window's open")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="onnx-studio-fuzz-in-"))
    try:
        paths = mutated_models(args.count, args.seed, folder)
        report = run(paths, timeout=args.timeout, window=not args.no_window, keep=args.keep)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{report.models} models, {report.commands} commands, {len(report.findings)} findings, "
          f"{report.seconds / 60:.1f} min")
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
