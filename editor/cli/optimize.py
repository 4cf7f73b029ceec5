"""``onnx-studio optimize``: the editor's optimizer passes from a terminal.

    onnx-studio optimize IN -o OUT [--passes a,b,c | --level basic|extended]
                         [--input-shape NAME:1,3,224,224 ...] [--size-limit BYTES]
                         [--allow-growth] [--check] [--check-each] [--list]

Opens IN as the editor does, runs the passes to a fixed point as one command (what the
window's pass preview applies), prints a table of node counts per op type before and after
and the file size change, and saves OUT. ``--check`` runs the original and the optimized
model on the same inputs in a child process and reports the largest difference; outputs
that differ by more than 1e-5 (relative) make the exit code 1 and OUT is not written.

``--check-each`` first applies the passes one at a time, running the model before and
after each pass that changed something (one line per pass with its largest difference);
the written model is still the pipeline's.

Exit codes: 0 written; 1 the check found different outputs; 2 bad arguments or unreadable
IN / unwritable OUT.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from editor.errors import StudioError

__all__ = ["add_parser", "parse_input_shapes", "run"]


class OptimizeArgError(StudioError):
    """A malformed --passes / --input-shape / --size-limit."""

    exit_code = 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("optimize", help="fold constants, fuse and clean up a model (passes to a fixed point)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="IN", nargs="?", help="the model to optimize")
    p.add_argument("-o", "--output", metavar="OUT", help="where to write the optimized model")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--passes", metavar="A,B,C", help="run these passes (and what they need), see --list")
    group.add_argument("--level", choices=("basic", "extended"), default="extended",
                       help="basic: eliminations, folding, dead code; extended (default): also fusions and dedup")
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME:D0,D1,...",
                   help="pin an input's shape before folding (repeatable)")
    p.add_argument("--size-limit", type=int, metavar="BYTES",
                   help="largest tensor a fold may create (default 1048576)")
    p.add_argument("--allow-growth", action="store_true",
                   help="fold even where the result is larger than the constants it replaces")
    p.add_argument("--check", action="store_true",
                   help="run both models on the same inputs and refuse to write OUT if outputs differ")
    p.add_argument("--check-each", action="store_true",
                   help="apply the passes one at a time and check each change by running the model "
                        "(stops before the first pass that changes outputs)")
    p.add_argument("--list", action="store_true", help="list the passes and exit")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding IN's external data (default: IN's folder)")
    return p


def parse_input_shapes(items: list[str]) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for item in items:
        name, sep, dims = item.rpartition(":")
        if not sep or not name:
            raise OptimizeArgError(f"--input-shape {item!r}: expected NAME:D0,D1,... (e.g. input:1,3,224,224)")
        try:
            shapes[name] = [int(d) for d in dims.split(",")] if dims.strip() else []
        except ValueError:
            raise OptimizeArgError(f"--input-shape {item!r}: dims must be integers") from None
    return shapes


def _table(report: Any) -> list[str]:
    ops = sorted(set(report.before) | set(report.after), key=lambda o: (-report.before[o], o))
    width = max([len(o) for o in ops] + [7])
    lines = [f"{'op type':<{width}}  {'before':>7}  {'after':>7}  {'change':>7}"]
    for op in ops:
        b, a = report.before[op], report.after[op]
        lines.append(f"{op:<{width}}  {b:>7}  {a:>7}  {a - b:>+7}" if a != b else f"{op:<{width}}  {b:>7}  {a:>7}")
    lines.append(f"{'total':<{width}}  {report.nodes_before:>7}  {report.nodes_after:>7}  "
                 f"{report.nodes_after - report.nodes_before:>+7}")
    return lines


def _size(path: Path) -> int:
    """The model file plus the external data files it references."""
    import onnx

    total = path.stat().st_size
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - text syntax and the like: the file alone
        return total
    locations = {e.value for t in model.graph.initializer for e in t.external_data if e.key == "location"}
    for loc in locations:
        data = path.parent / loc
        if data.is_file():
            total += data.stat().st_size
    return total


def _checked_each(doc: Any, options: Any, base_dir: Path) -> int:
    """``--check-each``: one line per pass that changed something, with its check."""
    from editor.commands.tensors import tensor_to_array
    from editor.passes.safety import optimize_checking_each_pass

    _, checks = optimize_checking_each_pass(doc.model, options, base_dir=base_dir,
                                            reader=lambda t: tensor_to_array(t, doc.store))
    for c in checks:
        print(f"check {c.name}: {c.changes} change(s): {c.result.summary()}")
    bad = [c for c in checks if c.result.status == "different"]
    if bad:
        print(f"error: pass {bad[0].name} changes the outputs; nothing written", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    from editor.passes.manager import REGISTRY, OptimizeOptions, plan_optimize, resolve

    if args.list:
        for name, info in REGISTRY.items():
            print(f"{name:34s} {info.level:9s} {info.description}")
        return 0
    if not args.input or not args.output:
        raise OptimizeArgError("optimize needs IN and -o OUT")
    passes = [p.strip() for p in args.passes.split(",") if p.strip()] if args.passes else None
    if passes is not None and not passes:
        raise OptimizeArgError("--passes names no pass")
    if args.size_limit is not None and args.size_limit < 0:
        raise OptimizeArgError(f"--size-limit {args.size_limit} is negative")
    options = OptimizeOptions(passes=passes, level=args.level, input_shapes=parse_input_shapes(args.input_shape),
                              allow_growth=args.allow_growth)
    if args.size_limit is not None:
        options.size_limit = args.size_limit
    try:
        resolve(options.passes, options.level)  # unknown names fail before reading the model
    except StudioError as exc:
        raise OptimizeArgError(exc.message) from exc

    from editor.document import Document

    src = Path(args.input)
    doc = Document.open(src, data_dir=args.data_dir)
    try:
        base_dir = src.resolve().parent if args.data_dir is None else Path(args.data_dir)
        if args.check_each:
            if _checked_each(doc, options, base_dir) != 0:
                return 1
        plan = plan_optimize(doc, options)
        report = plan.report
        print("\n".join(_table(report)))
        for note in report.notes:
            print(f"note: {note}")
        print(f"passes: {', '.join(f'{k}={v}' for k, v in report.changes.items() if v) or 'nothing to do'} "
              f"({report.rounds} round(s), {report.seconds:.2f} s)")
        if args.check:
            from editor.passes.safety import check_equivalence

            result = check_equivalence(doc.model, plan.result_model, base_dir=base_dir)
            print(f"check: {result.summary()}")
            if result.status == "different":
                print(f"error: not writing {args.output}: the optimized model's outputs differ", file=sys.stderr)
                return 1
        if plan.command is not None:
            doc.execute(plan.command)
        out = doc.save(args.output)
        before, after = _size(src), _size(Path(out))
        change = (after - before) / before * 100 if before else 0.0
        print(f"size: {before:,} -> {after:,} bytes ({change:+.1f}%)")
    finally:
        if doc.store is not None:
            doc.store.close()
    return 0
