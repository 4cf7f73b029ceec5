"""``onnx-studio compare``: run two sides on the same inputs and find where the numbers part.

    onnx-studio compare A.onnx [B.onnx] [--backend ort|reference] [--vs-backend ...]
                        [--providers P,...] [--vs-providers P,...] [--opt LEVEL] [--vs-opt LEVEL]
                        [--input NAME=FILE ...] [--seed N] [--val-range NAME:LO,HI ...] [--dim NAME=V ...]
                        [--atol A] [--rtol R] [--tol NAME:ATOL,RTOL ...] [--outputs-only]
                        [--json] [--all] [--save DIR] [--timeout S]
                        [--backend ray --cluster ADDRESS [--num-gpus N] [--workers N]]
    onnx-studio compare A.onnx --vs-outputs SAVED.npz --inputs INPUTS.npz [...]

Without B the model is compared with itself on another backend (``--vs-backend``, default:
the reference evaluator when A runs on onnxruntime). Every tensor of A is compared with its
counterpart (the same name, or for two models the structural diff's mapping, quantized
tensors dequantized); the first tensor in topological order beyond ``--atol`` / ``--rtol``
is the first divergence. Inputs not given are random and follow what each input feeds;
``--save DIR`` writes them (``inputs.npz``) beside both sides' outputs and the JSON report.

``--vs-outputs`` compares one run with values saved earlier (``a_outputs.npz`` of
``--save``, or any ``.npz`` of tensor name -> array), fed the saved run's ``--inputs``.

A side with no backend named runs on onnxruntime only: when onnxruntime cannot run it there
is no verdict, unless ``--allow-fallback`` lets it run on the reference evaluator (the
verdict then names the fallback). Each side is fed the inputs in its own declared types (an
fp16 model gets fp16), said in a ``note:`` line. An output that holds NaN or Inf on either
side is a finding, never agreement (``--infinities-compare-equal``: the same Inf in the
same places agrees; NaN never does).

Exit codes, each with one meaning (``--json`` carries the same in ``verdict`` and
``exit_code``, also for errors): 0 the outputs agree (every output compared, within
tolerance, finite); 1 they differ (or hold NaN/Inf); 2 no verdict: a model or input could
not be read, a side could not be fed or run, or bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from editor.errors import RuntimeBackendError, StudioError

__all__ = ["add_parser", "run"]

_OPT_LEVELS = ("disable", "basic", "extended", "layout", "all")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("compare", help="compare two runs tensor by tensor (exit 0 agree, 1 differ, 2 cannot run)",
                              description=__doc__.split("\n\n")[0])
    _configure(p)
    p.set_defaults(func=run)
    return p


def _configure(p: argparse.ArgumentParser) -> None:
    from editor.runtime.backends import BACKENDS

    p.add_argument("a", metavar="A", help="the model (side A)")
    p.add_argument("b", metavar="B", nargs="?", help="a second model (side B); default: A on --vs-backend")
    p.add_argument("--vs-outputs", metavar="FILE.npz",
                   help="side B is values saved earlier (tensor name -> array, e.g. a_outputs.npz of --save); "
                        "give that run's inputs with --inputs")
    p.add_argument("--backend", choices=sorted(BACKENDS), help="backend of side A (default: onnxruntime, falling back)")
    p.add_argument("--vs-backend", choices=sorted(BACKENDS), help="backend of side B")
    p.add_argument("--providers", help="onnxruntime execution providers of side A, comma separated")
    p.add_argument("--vs-providers", help="onnxruntime execution providers of side B")
    p.add_argument("--opt", choices=_OPT_LEVELS, default="all", help="onnxruntime graph optimization level of side A")
    p.add_argument("--vs-opt", choices=_OPT_LEVELS, default=None, help="graph optimization level of side B")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE", help="value for an input (.npy/.npz/.pb; repeatable)")
    p.add_argument("--inputs", metavar="FILE.npz", help="all inputs from one .npz (as written by --save)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--val-range", action="append", default=[], metavar="NAME:LO,HI", help="value range of a random input")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="value of a symbolic dimension")
    p.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (default 1e-4)")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance (default 1e-3)")
    p.add_argument("--tol", action="append", default=[], metavar="NAME:ATOL,RTOL", help="tolerance for one tensor (repeatable)")
    p.add_argument("--outputs-only", action="store_true",
                   help="compare the graph outputs only (faster; onnxruntime's fully fused graph)")
    p.add_argument("--allow-fallback", action="store_true",
                   help="let a side onnxruntime cannot run fall back to the reference evaluator (the verdict says so)")
    p.add_argument("--infinities-compare-equal", action="store_true",
                   help="the same +Inf/-Inf in the same places on both sides agrees (NaN never does)")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.add_argument("--all", action="store_true", help="list every tensor, not only the ones that differ")
    p.add_argument("--save", metavar="DIR", help="write inputs.npz, a_outputs.npz, b_outputs.npz and compare.json to DIR")
    p.add_argument("--timeout", type=float, metavar="S", help="time limit of each run")
    from editor.cli.remote_args import add_remote_arguments

    add_remote_arguments(p, workers=2)


def _providers(text: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None


def _tolerances(args: argparse.Namespace):  # noqa: ANN202
    from editor.debug import Tolerance

    if args.atol < 0 or args.rtol < 0:
        raise _usage(f"tolerances must not be negative (--atol {args.atol}, --rtol {args.rtol})")
    per: dict[str, tuple[float, float]] = {}
    for item in args.tol:
        name, sep, rest = item.rpartition(":")
        a, comma, r = rest.partition(",")
        try:
            if not sep or not name or not comma:
                raise ValueError
            per[name] = (float(a), float(r))
        except ValueError:
            raise _usage(f"--tol {item!r} is not NAME:ATOL,RTOL") from None
    return Tolerance(args.atol, args.rtol, per, infinities_equal=args.infinities_compare_equal)


def _usage(message: str) -> StudioError:
    error = StudioError(message)
    error.exit_code = 2  # 1 means "the runs differ"
    return error


def sides(args: argparse.Namespace):  # noqa: ANN201 - shared with reduce
    """The two :class:`RunSpec` of ``compare``'s arguments."""
    from editor.debug import RunSpec
    from editor.runtime import RunOptions

    pa, pb = _providers(args.providers), _providers(args.vs_providers)
    backend_a = args.backend or ("ort" if pa else None)
    if args.b is None:
        backend_b = args.vs_backend or ("ort" if pb or args.vs_opt else ("reference" if backend_a in (None, "ort") else "ort"))
    else:
        backend_b = args.vs_backend or backend_a
    if args.b is None and backend_b == backend_a and pb == pa and (args.vs_opt or args.opt) == args.opt:
        raise _usage("both sides are the same run: give B.onnx, --vs-backend, --vs-providers or --vs-opt")
    a = RunSpec(args.a, backend_a, RunOptions(providers=pa, graph_optimization_level=args.opt))
    b = RunSpec(args.b or args.a, backend_b, RunOptions(providers=pb, graph_optimization_level=args.vs_opt or args.opt))
    return a, b


def given_inputs(args: argparse.Namespace, model: Any) -> dict[str, Any]:
    """``--inputs FILE.npz`` and ``--input NAME=FILE`` values, checked against the model."""
    from editor.cli.run import _parse_pairs
    from editor.runtime import input_specs, load_input_file
    from editor.runtime.inputs import load_inputs

    feeds: dict[str, Any] = load_inputs(args.inputs, model) if args.inputs else {}
    specs = {s.name: s for s in input_specs(model)}
    for name, path in _parse_pairs(args.input, "--input"):
        if name not in specs:
            raise RuntimeBackendError(f"--input {name!r}: the model has no such input (inputs: {', '.join(specs) or 'none'})")
        feeds[name] = load_input_file(path, specs[name])
    return feeds


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _print(result: Any, show_all: bool, out: Any) -> None:
    """The verdict with its evidence (:meth:`Comparison.summary`) and the rows that matter:
    every output, every tensor beyond tolerance, the first NaN/Inf (``--all``: every row)."""
    lines = result.summary()
    c = result.counts()
    mapped = c["tensors"] - c["unmapped"]
    print("\n".join(lines[:2]), file=out)
    print(f"tensors: {c['tensors']} in A, {mapped} mapped to B, {c['compared']} compared, {c['differ']} beyond "
          f"atol={result.tolerance.atol:g} rtol={result.tolerance.rtol:g}"
          + (f", {c['nonfinite']} hold NaN/Inf" if c["nonfinite"] else ""), file=out)
    if result.mapping is not None and result.mapping.diff is not None:
        for text, n in result.mapping.diff.rewrite_counts().items():
            print(f"  rewrite: {n} x {text}" if n > 1 else f"  rewrite: {text}", file=out)
    print("\n".join(lines[2:-1]), file=out)
    first_nonfinite = result.first_nonfinite
    rows = [t for t in result.tensors if show_all or t.ok is False or t.a in result.outputs or t is first_nonfinite]
    if rows:
        print(f"{'':4} {'max_abs':>9} {'max_rel':>9} {'cosine':>9}  tensor (node)", file=out)
    for t in rows:
        print(_row_text(t, t.a in result.outputs), file=out)
    print(lines[-1], file=out)


def _row_text(t: Any, is_output: bool) -> str:
    """One row: errors as numbers, or NaN/Inf in words ("NaN  A finite, B all NaN"), never
    the 0 / 0 / 1 of the finite elements alone."""
    mark = {"ok": "ok", "differ": "DIFF", "nan": "NaN", "inf": "Inf", "not compared": "--"}[t.status]
    e = t.error
    if t.finding:
        numbers = f"{t.finding:<29}"
    else:
        numbers = f"{_fmt(e.max_abs if e else None):>9} {_fmt(e.max_rel if e else None):>9} {_fmt(e.cosine if e else None):>9}"
    extra = f" [{t.note}]" if t.note else ""
    out_tag = " [output]" if is_output else ""
    return f"{mark:4} {numbers}  {t.a}{' (' + t.node + ')' if t.node else ''}{out_tag}{extra}"


def _save(result: Any, folder: Path) -> None:
    import numpy as np

    from editor.runtime.inputs import save_inputs

    folder.mkdir(parents=True, exist_ok=True)
    save_inputs(folder / "inputs.npz", result.inputs)
    outs = set(result.outputs)
    for side, values in (("a", result.values_a), ("b", result.values_b)):
        names = {t.a: (t.a if side == "a" else t.b) for t in result.tensors if t.a in outs and t.b is not None}
        arrays = {k: values[v] for k, v in names.items() if isinstance(values.get(v), np.ndarray)}
        save_inputs(folder / f"{side}_outputs.npz", arrays)
    (folder / "compare.json").write_text(json.dumps(result.to_json(), indent=1, default=str), encoding="utf-8")


def _against_saved(args: argparse.Namespace, tolerance: Any, runner: Any = None) -> int:
    from editor.cli.run import _parse_pairs, parse_val_ranges
    from editor.debug import RunSpec, compare_to_saved
    from editor.errors import LoadError
    from editor.runtime import RunOptions

    if args.b is not None or args.vs_backend or args.vs_providers or args.vs_opt:
        raise _usage("--vs-outputs is side B: give no B.onnx, --vs-backend, --vs-providers or --vs-opt with it")
    if not Path(args.vs_outputs).is_file():
        raise LoadError(f"saved outputs not found: {args.vs_outputs!r}")
    providers = _providers(args.providers)
    a = RunSpec(args.a, args.backend or ("ort" if providers else None),
                RunOptions(providers=providers, graph_optimization_level=args.opt))
    try:
        model = a.proto()
    except StudioError as exc:
        raise LoadError(exc.message) from exc
    dims = {k: int(v) for k, v in _parse_pairs(args.dim, "--dim")}
    result = compare_to_saved(a, args.vs_outputs, given_inputs(args, model), tolerance=tolerance, seed=args.seed,
                              dims=dims, val_ranges=parse_val_ranges(args.val_range), timeout=args.timeout,
                              runner=runner, allow_fallback=args.allow_fallback)
    _report(args, result)
    return result.exit_code


@contextmanager
def no_verdict_on_error(args: argparse.Namespace) -> Iterator[None]:
    """Anything that stops a verdict (a bad input, a model or side that cannot be read, fed
    or run) exits 2, never 1 ("differ"); with ``--json`` the same verdict goes to stdout
    (``{"verdict": "no verdict", "exit_code": 2, "error": ...}``) beside the ``error:`` line."""
    try:
        yield
    except StudioError as exc:
        if exc.exit_code == 1:
            exc.exit_code = 2
        if getattr(args, "json", False):
            from editor.cli import emit_json

            emit_json({"verdict": "no verdict", "exit_code": exc.exit_code, "error": exc.message})
        raise


def _report(args: argparse.Namespace, result: Any) -> None:
    from editor.cli import emit_json

    if args.json:
        emit_json(result.to_json())
    else:
        _print(result, args.all, sys.stdout)


def run(args: argparse.Namespace) -> int:
    from editor.cli.remote_args import run_with_pool

    with no_verdict_on_error(args):
        return run_with_pool(args, _run)  # --backend ray: both sides run on the cluster, at once


def _run(args: argparse.Namespace, pool: Any) -> int:
    from editor.cli.run import _parse_pairs, parse_val_ranges
    from editor.debug import compare_runs
    from editor.errors import LoadError

    tolerance = _tolerances(args)
    if args.vs_outputs:
        return _against_saved(args, tolerance, pool.runners[0] if pool is not None else None)
    a, b = sides(args)
    try:
        model_a = a.proto()
        if args.b is not None:
            b.proto()
    except StudioError as exc:
        error = LoadError(exc.message)
        raise error from exc
    dims = {k: int(v) for k, v in _parse_pairs(args.dim, "--dim")}
    feeds = given_inputs(args, model_a)
    result = compare_runs(a, b, feeds, tolerance=tolerance, seed=args.seed, dims=dims,
                          val_ranges=parse_val_ranges(args.val_range), intermediates=not args.outputs_only,
                          keep_values=bool(args.save), timeout=args.timeout,
                          runner=pool.runners[0] if pool is not None else None,
                          pool=pool.runners if pool is not None else None, allow_fallback=args.allow_fallback)
    _report(args, result)
    if args.save:
        _save(result, Path(args.save))
        if not args.json:
            print(f"saved inputs, outputs and report to {args.save}")
    return result.exit_code
