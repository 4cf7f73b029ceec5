#!/usr/bin/env python3
"""Start-up time to a painted window on the bundled sample model, for each installation given:
the PyInstaller bundle, a pip install (a fresh venv with the wheel), the development .venv.

    python tests/benchmarks/bench_startup.py [--repeat 7] [--bundle dist/onnx-studio/onnx-studio]
                                             [--exe NAME=PATH ...] [--json out.json]

Each run is ``PROGRAM --screenshot FILE`` (offscreen, from a clean environment, the sample
model shipped inside the installation) in a fresh process; the program reports how long after
its own start (the exec, so interpreter start-up and every import count) the canvas first
painted the model (``model painted X s after start``). Also reported: the whole process's
wall time (it waits 150 ms for the last layout to paint, grabs and writes a PNG). Runs of the
programs are interleaved so that machine load hits all alike; medians and best of
``--repeat``. The target is under 2 s to a painted window.
Not collected by pytest (tests/benchmarks is ignored by the default run).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAINTED = re.compile(r"model painted ([0-9.]+) s after start")


def one_run(exe: Path, work: Path) -> tuple[float, float]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    proc = subprocess.run([str(exe), "--screenshot", str(work / "shot.png")], capture_output=True, text=True,
                          env=env, cwd=work, timeout=300)
    wall = time.perf_counter() - start
    m = PAINTED.search(proc.stderr)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"{exe}: exit {proc.returncode}\n{proc.stderr}")
    return float(m.group(1)), wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--bundle", type=Path, default=ROOT / "dist" / "onnx-studio" / "onnx-studio")
    ap.add_argument("--exe", action="append", default=[], metavar="NAME=PATH",
                    help="another onnx-studio to time (e.g. pip=/tmp/venv/bin/onnx-studio)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    programs = {"dev .venv": ROOT / ".venv" / "bin" / "onnx-studio"}
    if args.bundle.is_file():
        programs["bundle"] = args.bundle
    for item in args.exe:
        name, _, path = item.partition("=")
        programs[name] = Path(path)
    results: dict[str, dict[str, list[float]]] = {name: {"painted": [], "wall": []} for name in programs}
    with tempfile.TemporaryDirectory(prefix="onnx-studio-startup-") as tmp:
        work = Path(tmp)
        for name, exe in programs.items():  # one warm-up each: disk cache, first .pyc writes
            one_run(exe, work)
        for _ in range(args.repeat):
            for name, exe in programs.items():
                painted, wall = one_run(exe, work)
                results[name]["painted"].append(painted)
                results[name]["wall"].append(wall)
    print(f"{'program':<12} {'painted median':>15} {'best':>7} {'wall median':>12} {'best':>7}   (s, {args.repeat} runs)")
    for name, r in results.items():
        print(f"{name:<12} {statistics.median(r['painted']):>15.2f} {min(r['painted']):>7.2f} "
              f"{statistics.median(r['wall']):>12.2f} {min(r['wall']):>7.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
