"""``onnx-studio reduce``: bisect a failing model to the smallest subgraph that still fails.

    onnx-studio reduce MODEL (--check nan|crash | --vs-backend B | --vs B.onnx) -o OUT.onnx
                       [--backend ort|reference] [--providers P,...] [--vs-providers P,...]
                       [--opt LEVEL] [--vs-opt LEVEL] [--input NAME=FILE ...] [--inputs FILE.npz]
                       [--seed N] [--val-range NAME:LO,HI ...] [--dim NAME=V ...]
                       [--atol A] [--rtol R] [--no-hints]
                       [--backend ray --cluster ADDRESS [--num-gpus N] [--workers N]]

The failure is one of: an output with NaN (``--check nan``), the backend crashing or
refusing the model (``--check crash``), the backend disagreeing with another
(``--vs-backend``, ``--vs-providers``, ``--vs-opt``) or the model disagreeing with another
model on the same inputs (``--vs B.onnx``). Cuts are fed the real intermediate values of a
full run; every run happens in a child process, so a crash is a result, not an ending.
Writes ``OUT.onnx`` and its inputs ``OUT.npz``: ``onnx-studio run OUT.onnx --input
NAME=OUT.npz ...`` shows the failure again.

The backend under test is onnxruntime unless ``--backend`` names another; a run it cannot
make is a result of the check (``--check crash``) or stops the reduction (exit 2), never a
silent move to the reference evaluator (``--allow-fallback`` permits that, and says so).

Exit codes: 0 reduced and saved; 1 the model does not fail the check; 2 no result: the
model or an input cannot be read, it cannot be run for its values, or bad usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from editor.errors import StudioError

__all__ = ["add_parser", "run"]

_OPT_LEVELS = ("disable", "basic", "extended", "layout", "all")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("reduce", help="bisect a failing model to its smallest failing subgraph",
                              description=__doc__.split("\n\n")[0])
    _configure(p)
    p.set_defaults(func=run)
    return p


def _configure(p: argparse.ArgumentParser) -> None:
    from editor.runtime.backends import BACKENDS

    p.add_argument("model", metavar="MODEL", help="the failing model")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", choices=("nan", "crash"), help="the failure: NaN in an output, or the backend crashing")
    what.add_argument("--vs-backend", choices=sorted(BACKENDS), help="the failure: disagreeing with this backend")
    what.add_argument("--vs", metavar="B.onnx", help="the failure: disagreeing with this model")
    what.add_argument("--vs-opt", choices=_OPT_LEVELS, help="the failure: disagreeing with this onnxruntime optimization level")
    what.add_argument("--vs-providers", help="the failure: disagreeing with these execution providers")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx", help="where to write the reduced model (inputs: OUT.npz)")
    p.add_argument("--backend", choices=sorted(BACKENDS), help="backend under test (default: onnxruntime)")
    p.add_argument("--providers", help="onnxruntime execution providers under test, comma separated")
    p.add_argument("--opt", choices=_OPT_LEVELS, default="all", help="graph optimization level under test")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE", help="value for an input (repeatable)")
    p.add_argument("--inputs", metavar="FILE.npz", help="all inputs from one .npz")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--val-range", action="append", default=[], metavar="NAME:LO,HI", help="value range of a random input")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="value of a symbolic dimension")
    p.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance of the diff checks")
    p.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance of the diff checks")
    p.add_argument("--no-hints", action="store_true", help="bisect even when the full run already points at a node")
    p.add_argument("--allow-fallback", action="store_true",
                   help="runs onnxruntime cannot make may fall back to the reference evaluator")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="time limit of each run (default 60)")
    from editor.cli.remote_args import add_remote_arguments

    add_remote_arguments(p, workers=4)


def make_check(args: argparse.Namespace):  # noqa: ANN201
    from editor.debug import BackendDiffCheck, CrashCheck, ModelDiffCheck, NanCheck, Tolerance
    from editor.runtime import RunOptions

    providers = tuple(x.strip() for x in args.providers.split(",") if x.strip()) if args.providers else None
    backend = args.backend or (None if args.allow_fallback and not providers else "ort")
    options = RunOptions(providers=providers, graph_optimization_level=args.opt)
    tolerance = Tolerance(args.atol, args.rtol)
    if args.check == "nan":
        return NanCheck(backend, options, timeout=args.timeout)
    if args.check == "crash":
        return CrashCheck(backend or "ort", options, timeout=args.timeout)
    if args.vs:
        return ModelDiffCheck(args.vs, backend=backend, options=options, tolerance=tolerance, timeout=args.timeout)
    vs_providers = tuple(x.strip() for x in args.vs_providers.split(",") if x.strip()) if args.vs_providers else providers
    vs_backend = args.vs_backend or "ort"
    vs_options = RunOptions(providers=vs_providers, graph_optimization_level=args.vs_opt or args.opt)
    return BackendDiffCheck(backend or "ort", vs_backend, options_a=options, options_b=vs_options,
                            tolerance=tolerance, timeout=args.timeout)


def run(args: argparse.Namespace) -> int:
    from editor.cli.compare import no_verdict_on_error
    from editor.cli.remote_args import run_with_pool

    out = Path(args.output)
    if out.suffix.lower() != ".onnx":
        error = StudioError(f"-o {args.output!r}: give a path ending in .onnx (the inputs go beside it as .npz)")
        error.exit_code = 2
        raise error
    with no_verdict_on_error(args):
        return run_with_pool(args, _run)  # --backend ray: bisection steps run on the cluster, several at once


def _run(args: argparse.Namespace, pool: Any) -> int:
    from editor.cli.compare import given_inputs
    from editor.cli.run import _parse_pairs, parse_val_ranges
    from editor.debug import reduce_model
    from editor.debug.reduce import DoesNotFail
    from editor.errors import LoadError
    from editor.runtime.source import ModelSource

    out = Path(args.output)
    try:
        model = ModelSource.from_path(args.model).load_proto()
        if args.vs:
            ModelSource.from_path(args.vs).load_proto()
    except StudioError as exc:
        raise LoadError(exc.message) from exc
    check = make_check(args)
    feeds = given_inputs(args, model)
    dims = {k: int(v) for k, v in _parse_pairs(args.dim, "--dim")}
    try:
        result = reduce_model(model, check, feeds, seed=args.seed, dims=dims, val_ranges=parse_val_ranges(args.val_range),
                              use_hints=not args.no_hints,
                              progress=lambda msg: print(f"  {msg}", file=sys.stderr),
                              pool=pool.runners if pool is not None else None)
    except DoesNotFail as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    model_path, npz = result.save(out)
    kept = ", ".join(n + (f" inside {result.scopes[n]}" if n in result.scopes else "") for n in result.nodes)
    print(f"reduced {result.original_nodes} nodes to {len(result.nodes)} ({kept}) "
          f"in {result.runs} runs; failure: {result.check}")
    for line in result.log:
        print(f"  {line}")
    print(f"wrote {model_path} and its inputs {npz}")
    return 0
