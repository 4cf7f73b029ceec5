"""Many ``python -m widgets ARGS`` runs as real processes, without a Python start-up each.

One child interpreter imports the command line (and the subcommands named) once, then forks
a grandchild per run: each run is its own process, with its own working folder, exit status,
stdout and stderr, running ``widgets`` as ``-m`` does (``runpy``, ``__main__``). What it skips
is the interpreter's start-up and ``import onnx`` (0.5-1 s of CPU per run on a 2-core machine),
which is what made a matrix of 60 bad-input runs cost the suite 25 s of both cores.

Use :func:`run_many` for a matrix of runs; a single run that must prove the real entry point
(``sys.executable -m widgets``) stays a plain ``subprocess.run``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The child: reads the runs as JSON on stdin, answers one JSON list on stdout.
_SERVER = r"""
import importlib, json, os, runpy, sys, tempfile, traceback

request = json.load(sys.stdin)
for name in ["widgets.cli", *request["preload"]]:
    importlib.import_module(name)
out_dir = tempfile.mkdtemp(prefix="cli-forks-")
results = [None] * len(request["runs"])
running = {}


def child(i, run):
    code = 1
    try:
        os.chdir(run["cwd"])
        for fd, kind in ((1, "out"), (2, "err")):
            target = os.open(os.path.join(out_dir, f"{i}.{kind}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(target, fd)
            os.close(target)
        sys.argv = ["widgets", *run["args"]]
        try:
            runpy.run_module("widgets", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:  # as the interpreter maps it
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - printed as an uncaught exception would be
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def reap():
    pid, status = os.wait()
    i = running.pop(pid)
    text = {}
    for kind in ("out", "err"):
        path = os.path.join(out_dir, f"{i}.{kind}")
        with open(path, encoding="utf-8", errors="replace") as f:
            text[kind] = f.read()
        os.unlink(path)
    results[i] = {"returncode": os.waitstatus_to_exitcode(status), "stdout": text["out"], "stderr": text["err"]}


for i, run in enumerate(request["runs"]):
    while len(running) >= request["parallel"]:
        reap()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(i, run)
    running[pid] = i
while running:
    reap()
os.rmdir(out_dir)
json.dump(results, sys.stdout)
"""


def run_many(runs: list[tuple[list[str], Path]], *, preload: tuple[str, ...] = (), parallel: int = 2,
             timeout: float = 300) -> list[subprocess.CompletedProcess]:
    """Run ``python -m widgets ARGS`` in folder CWD for each ``(ARGS, CWD)``, ``parallel`` at a
    time; results in the same order. ``preload`` names modules to import once before forking
    (the subcommands' modules). ``ONNX_STUDIO_DEBUG`` is cleared, as a user's shell has it."""
    env = {k: v for k, v in os.environ.items() if k != "ONNX_STUDIO_DEBUG"}
    env["PYTHONPATH"] = str(ROOT)
    request = {"runs": [{"args": [str(a) for a in args], "cwd": str(cwd)} for args, cwd in runs],
               "preload": list(preload), "parallel": parallel}
    server = subprocess.run([sys.executable, "-c", _SERVER], input=json.dumps(request), capture_output=True,
                            text=True, cwd=ROOT, env=env, timeout=timeout)
    if server.returncode != 0:
        raise RuntimeError(f"the forking runner failed (exit {server.returncode}): {server.stderr[-2000:]}")
    return [subprocess.CompletedProcess(["widgets", *args], r["returncode"], r["stdout"], r["stderr"])
            for (args, _cwd), r in zip(runs, json.loads(server.stdout))]
