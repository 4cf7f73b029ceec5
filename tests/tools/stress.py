"""Run a command under an artificial load on every core, a few times in a row
(``python -m tests.tools.stress [--runs 3] [--load N] -- make test``; ``make test-stress``).

The load is one busy loop per core (``os.cpu_count()``, or ``--load N``): plain Python
processes spinning at normal priority, the way a browser and a build keep a developer's
laptop busy. It starts before the first run and ends, by the pids it started, after the last
(or on Ctrl+C). Each run prints its duration and the load average before and after; the
exit status is the first failing run's (the runs after a failure still go, so one flaky test
cannot hide another), 0 when every run passed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SPIN = "while True:\n    pass\n"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.tools.stress", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="how many times to run the command (default 3)")
    ap.add_argument("--load", type=int, default=os.cpu_count() or 1, help="busy loops (default: one per core)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command given (put it after --)")
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.load)]
    print(f"stress: {len(spinners)} busy loops (pids {' '.join(str(p.pid) for p in spinners)}); "
          f"{args.runs} runs of: {' '.join(command)}", flush=True)
    status = 0
    results: list[str] = []
    try:
        for run in range(1, args.runs + 1):
            before = _load()
            start = time.monotonic()
            rc = subprocess.call(command)
            seconds = time.monotonic() - start
            line = (f"stress run {run}/{args.runs}: exit {rc} in {seconds / 60:.1f} min "
                    f"(load average {before} before, {_load()} after)")
            results.append(line)
            print(line, flush=True)
            status = status or rc
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()
    print("\n".join(["stress: all runs"] + results), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
