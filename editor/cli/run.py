"""``onnx-studio run``: run a model once and summarise (or save) what it computes.

    onnx-studio run MODEL [--input NAME=FILE ...] [--random] [--seed N] [--val-range NAME:LO,HI ...]
                          [--dim NAME=VALUE ...]
                          [--backend ort|reference] [--providers P1,P2]
                          [--outputs NAME ... | --all-intermediates] [--save DIR]
                          [--json] [--timeout S] [--memory-limit SIZE] [--profile]
                          [--backend ray --cluster ADDRESS [--num-gpus N]]

The run happens in a child process (see :mod:`editor.runtime.runner`): a crashing kernel
gives ``error: ... died with SIGFPE`` and a non-zero exit, never a traceback. Exit codes:
0 ran; 1 the run failed, crashed, timed out or an input was wrong; 2 the model could not be
loaded (or bad usage, from argparse); 128+N ended by signal N (SIGTERM, SIGHUP), 130 Ctrl+C.
The worker ends with this command however it ends, even when it is killed with SIGKILL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from editor.cli.remote_args import add_remote_arguments, open_runner
from editor.errors import RuntimeBackendError, StudioError
from editor.runtime import Runner, RunOptions, RunResult, input_specs, load_input_file
from editor.runtime.input_plan import refit
from editor.runtime.inputs import save_inputs
from editor.runtime.backends import BACKENDS
from editor.runtime.intermediates import value_scopes
from editor.runtime.limits import parse_memory_limit, parse_timeout
from editor.runtime.source import ModelSource, load_model

__all__ = ["add_parser", "parse_val_ranges", "run", "safe_file_name"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``run`` on an ``argparse`` subparsers object."""
    p = subparsers.add_parser("run", help="run a model and summarise its outputs", description=__doc__.split("\n\n")[0])
    _configure(p)
    p.set_defaults(func=run)
    return p


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE", help="value for an input from .npy/.npz/.pb (repeatable)")
    p.add_argument("--random", action="store_true", help="random values for inputs not given with --input")
    p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    p.add_argument("--val-range", action="append", default=[], metavar="NAME:LO,HI",
                   help="value range of a random input (repeatable); otherwise the range follows what the input feeds")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="value of a symbolic dimension for --random (repeatable)")
    p.add_argument("--backend", choices=sorted(BACKENDS), help="pin one backend (default: onnxruntime, falling back to the reference evaluator)")
    p.add_argument("--providers", help="onnxruntime execution providers in priority order, comma separated")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--outputs", nargs="+", metavar="NAME", help="values to produce: graph outputs and/or intermediate values")
    group.add_argument("--all-intermediates", action="store_true", help="every value of the main graph, outputs included")
    p.add_argument("--save", metavar="DIR", help="write each value to DIR/NAME.npy (non-tensor values to NAME.json)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", metavar="S", help="give up after S seconds ('none': no limit, the default)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="cap the run's memory, e.g. 8G or 512M; 'none' for no cap (default: half the RAM)")
    p.add_argument("--profile", action="store_true", help="per-node times (onnxruntime profiling)")
    add_remote_arguments(p)


def safe_file_name(name: str, taken: set[str]) -> str:
    """A file stem for value ``name``: only ``[A-Za-z0-9._-]``, no leading dot, unique in ``taken``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "value"
    stem = stem[:120]
    candidate, n = stem, 2
    while candidate.lower() in taken:
        candidate = f"{stem}_{n}"
        n += 1
    taken.add(candidate.lower())
    return candidate


def _parse_pairs(items: list[str], what: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise RuntimeBackendError(f"{what} {item!r} is not NAME=VALUE")
        pairs.append((name, value))
    return pairs


def _jsonable(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value.tolist() if value.dtype.kind != "V" else value.astype(np.float32).tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _save(result: RunResult, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    written = []
    for name, record in result.outputs.items():
        stem = safe_file_name(name, taken)
        value = record.value
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "O":  # ONNX strings: store as unicode, no pickle needed
                value = value.astype(str)
            path = folder / f"{stem}.npy"
            shared = result.value_files.get(name)
            # a big value is already a complete .npy the worker wrote in this folder: name it
            if shared is None or not shared.link_to(path):
                np.save(path, value, allow_pickle=False)
        else:
            path = folder / f"{stem}.json"
            path.write_text(json.dumps({"name": name, "kind": record.kind, "value": _jsonable(value)}), encoding="utf-8")
        written.append(path)
    return written


def _save_folder(text: str) -> Path:
    """``--save DIR`` made before the run: the worker writes big values into it (nameless
    until saved, see :mod:`editor.runtime.shared_values`), so saving them is a link."""
    folder = Path(text)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RuntimeBackendError(f"--save {text!r}: cannot create the folder: {exc.strerror or exc}") from None
    return folder


def _build_inputs(args: argparse.Namespace, model: Any) -> Any:
    """The run's :class:`~editor.runtime.input_plan.InputPlan`: ``--input`` files as given,
    the rest random (``--random``) through the one input function every command uses."""
    from editor.runtime.input_plan import plan_inputs

    specs = {s.name: s for s in input_specs(model)}
    given = dict(_parse_pairs(args.input, "--input"))
    for name in given:
        if name not in specs:
            raise RuntimeBackendError(f"--input {name!r}: the model has no such input (inputs: {', '.join(specs) or 'none'})")
    dims = {k: int(v) for k, v in _parse_pairs(args.dim, "--dim")} if args.dim else {}
    ranges = parse_val_ranges(args.val_range)
    missing = [name for name in specs if name not in given]
    if missing and not args.random:
        spec = specs[missing[0]]
        raise RuntimeBackendError(f"input {spec.name!r} ({spec.type_text}) has no value: give --input {spec.name}=FILE or --random")
    loaded = {name: load_input_file(path, specs[name]) for name, path in given.items()}
    return plan_inputs(model, given=loaded, dims=dims, seed=args.seed, val_ranges=ranges)


def _error_of(result: RunResult) -> str | None:
    return None if result.ok else (result.error or result.status)


def parse_val_ranges(items: list[str]) -> dict[str, tuple[float, float]]:
    """``["ids:0,30521", "x:-1,1"]`` -> ``{"ids": (0.0, 30521.0), ...}`` (``--val-range``)."""
    out: dict[str, tuple[float, float]] = {}
    for item in items:
        name, sep, rest = item.rpartition(":")
        lo_text, comma, hi_text = rest.partition(",")
        try:
            if not sep or not name or not comma:
                raise ValueError
            lo, hi = float(lo_text), float(hi_text)
        except ValueError:
            raise RuntimeBackendError(f"--val-range {item!r} is not NAME:LO,HI") from None
        if hi < lo:
            raise RuntimeBackendError(f"--val-range {item!r}: HI is below LO")
        out[name] = (lo, hi)
    return out


def shape_notes(model: Any, feeds: dict[str, Any], result: RunResult) -> dict[str, str]:
    """Graph outputs whose computed shape contradicts the declared one -> how."""
    from editor.validation.declared import run_shape_notes

    def shapes(values: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        return {n: tuple(v.shape) for n, v in values.items() if isinstance(v, np.ndarray)}

    return run_shape_notes(model, shapes(feeds), shapes({n: r.value for n, r in result.outputs.items()}))


def _print_summary(result: RunResult, out: Any, notes: dict[str, str] | None = None) -> None:
    detail = f" ({result.detail})" if result.detail else ""
    print(f"backend: {result.backend}{detail}", file=out)
    for reason in result.fallback_reasons():
        print(f"  passed over {reason}", file=out)
    width = max((len(n) for n in result.outputs), default=0)
    for name, record in result.outputs.items():
        tag = "" if record.role == "output" else f" [{record.role}]"
        print(f"{name.ljust(width)}  {record.summary}{tag}", file=out)
        if notes and name in notes:
            print(f"{' ' * width}  ! shape contradicts the model: {notes[name]}", file=out)
    for warning in result.warnings:
        print(f"onnxruntime warning: {warning}", file=out)
    for name, why in result.missing.items():
        print(f"{name.ljust(width)}  (not available: {why})", file=out)
    if result.profile:
        print("profile (slowest nodes, microseconds):", file=out)
        for t in sorted(result.profile.values(), key=lambda t: -t.microseconds)[:15]:
            print(f"  {t.microseconds:12.1f}  {t.op_type:<16} {t.node}", file=out)


class _Terminated(BaseException):
    """SIGTERM / SIGHUP arrived during the run (raised in the main thread)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """During the run, SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl+C does, so the
    Runner stops its worker on the way out instead of the process vanishing mid-run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        raise _Terminated(signum)

    wanted = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    old = {s: signal.signal(s, handler) for s in wanted}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run(args: argparse.Namespace) -> int:
    """Execute ``onnx-studio run``; returns the exit code (errors as one ``error:`` line)."""
    runner = None
    try:
        timeout = parse_timeout(args.timeout) if args.timeout is not None else None
        memory = parse_memory_limit(args.memory_limit) if args.memory_limit is not None else None
        remote = open_runner(args)  # --backend ray: the runs go to the cluster
        runner = remote or Runner()
        if remote is None:
            runner.start(wait=False)  # the worker starts up while this process reads the model
        model = load_model(args.model)
        plan = _build_inputs(args, model)
        feeds = plan.feeds
        outputs = None
        if args.all_intermediates:
            scopes = value_scopes(model)
            outputs = list(dict.fromkeys(scopes.main + scopes.outputs))
        elif args.outputs:
            outputs = list(args.outputs)
        providers = tuple(p.strip() for p in args.providers.split(",") if p.strip()) if args.providers else None
        options = RunOptions(providers=providers, profile=args.profile, memory_limit_mb=memory)
        backend = args.backend
        if providers and backend is None:
            backend = "ort"  # providers only mean something to onnxruntime: pin it
        # a local worker writes big values straight into the save folder (linked, not copied)
        save_dir = _save_folder(args.save) if args.save and remote is None else None
        spill = {"spill_dir": str(save_dir)} if save_dir else {}
        source = ModelSource.from_path(args.model)
        with runner, _terminate_as_interrupt():
            result = runner.run(source, feeds, outputs=outputs, backend=backend, options=options, timeout=timeout,
                                **spill)
            if not result.ok and plan.dims.guessed() and "cannot create a session" not in (result.error or ""):
                # the guessed sizes do not run: others that do, said so in the inputs' lines
                better = refit(model, plan, result.error or result.status, lambda f: _error_of(
                    runner.run(source, f, backend=backend, options=options, timeout=timeout)))
                if better is not None:
                    plan, feeds = better, better.feeds
                    result = runner.run(source, feeds, outputs=outputs, backend=backend, options=options,
                                        timeout=timeout, **spill)
        if not result.ok:
            raise RuntimeBackendError(result.error or f"run {result.status}")
        notes = shape_notes(model, feeds, result)
        if args.json:
            data = result.to_json()
            data["shape_notes"] = notes
            data["inputs"] = plan.to_json()
            json.dump(data, sys.stdout, indent=1)
            print()
        else:
            _print_summary(result, sys.stdout, notes)
            print("\n".join(plan.lines()))  # the evidence: what was fed (shapes, ranges, guessed dims)
        if args.save:
            written = _save(result, Path(args.save))
            # the inputs go with the outputs, so the run can be repeated (--input NAME=inputs.npz)
            written.append(save_inputs(Path(args.save) / "inputs.npz", feeds))
            result.close_files()
            if not args.json:
                print(f"saved {len(written)} file(s) to {args.save} (inputs in inputs.npz)")
        return 0
    except StudioError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except _Terminated as exc:
        print(f"error: terminated by {exc.name}", file=sys.stderr)
        return 128 + exc.signum
    except Exception as exc:  # noqa: BLE001 - the CLI promises one line, never a traceback
        print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 1
    finally:
        if runner is not None:
            runner.close()  # also when the model or an input was refused before the run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="onnx-studio run")
    _configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
