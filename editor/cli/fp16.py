"""``onnx-studio fp16``: convert a model's float32 computation to float16 (or bfloat16).

    onnx-studio fp16 IN.onnx -o OUT.onnx [--keep-io-types] [--keep-ops Op,...]
                     [--keep-nodes NAME,...] [--bf16] [--clamp] [--auto-mixed TOL]

A tensor becomes fp16 only where every reader's operator schema accepts it; Casts go in at
the boundaries (see :mod:`editor.surgery.precision`). The result is checked (our checks and
``onnx.checker``), then both models run on the same random inputs and the error of every
output against fp32 is printed (``--no-compare`` skips the runs). ``--auto-mixed TOL`` keeps
in fp32 the fewest nodes the search finds that bring every output within TOL.

Exit codes: 0 written; 1 refused (unknown op to keep, nothing to convert at this opset,
the result failed a check, a run failed); 2 IN unreadable or OUT not writable.
"""

from __future__ import annotations

import argparse
from typing import Any

from editor.errors import CommandError, first_line

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fp16", help="convert fp32 to fp16/bf16 where every consumer's schema allows it",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", metavar="IN", help="the model to convert")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the converted model")
    p.add_argument("--keep-io-types", action="store_true", help="graph inputs and outputs stay float32")
    p.add_argument("--keep-ops", default="", metavar="OP,...", help="op types that stay in fp32")
    p.add_argument("--keep-nodes", default="", metavar="NAME,...", help="node names that stay in fp32")
    p.add_argument("--bf16", action="store_true", help="convert to bfloat16 instead of float16")
    p.add_argument("--clamp", action="store_true",
                   help="clamp weights beyond fp16's range to ±65504 (default: their readers stay fp32)")
    p.add_argument("--auto-mixed", type=float, metavar="TOL",
                   help="keep in fp32 the fewest nodes that bring every output within TOL (max abs error)")
    p.add_argument("--no-compare", action="store_true", help="do not run the models to measure the error")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a symbolic input dimension for the comparison runs (repeatable)")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding IN's external data (default: its folder)")
    return p


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def run(args: argparse.Namespace) -> int:
    from editor.cli.info_cost import parse_dims
    from editor.document import Document
    from editor.passes.apply import ApplyModel
    from editor.surgery.precision import TARGETS, convert_precision
    from editor.validation import Validator, count_errors

    target = TARGETS["bf16" if args.bf16 else "fp16"]
    options = dict(target=target, keep_io_types=args.keep_io_types, keep_ops=_split(args.keep_ops),
                   keep_nodes=_split(args.keep_nodes), clamp=args.clamp)
    if args.auto_mixed is not None and args.no_compare:
        raise CommandError("--auto-mixed needs the comparison runs; drop --no-compare")
    if args.auto_mixed is not None and args.auto_mixed < 0:
        raise CommandError(f"--auto-mixed takes a tolerance >= 0, not {args.auto_mixed}")
    dims = parse_dims(args.dim)
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        from editor.io.tensors import iter_tensors, uses_external_data

        external = any(uses_external_data(site.tensor) for site in iter_tensors(doc.model))
        original = doc.model.__class__()
        original.CopyFrom(doc.model)
        comparison = None
        if args.auto_mixed is not None and external:
            import onnx

            # the search runs many in-memory models: it needs the weights in memory
            original = onnx.load(str(args.model))
        if args.auto_mixed is not None:
            from editor.runtime import Runner
            from editor.surgery.automixed import auto_mixed
            from editor.surgery.compare import inputs_for

            inputs = inputs_for(original, dims=dims)
            with Runner() as runner:
                found = auto_mixed(original, args.auto_mixed, inputs, runner=runner, store=doc.store, **options)
            result, comparison = found.result, found.comparison
            print(f"auto-mixed: {len(found.kept)} node(s) kept in fp32 after {found.probes} probe(s)"
                  + ("" if found.reached else f"; even then an output is beyond {args.auto_mixed:g}"))
        else:
            result = convert_precision(original, store=doc.store, **options)
        doc.execute(ApplyModel(result.model, "Convert precision"))
        problems = count_errors(Validator(doc, live=False).validate_all())
        if problems:
            raise CommandError(f"the converted model has {problems} error(s) by `onnx-studio check` (a bug: please report)")
        print(result.summary())
        for note in result.notes:
            print(f"note: {note}")
        doc.save(args.output)
        _checker(args.output, args.model)  # the written file: external weights resolve beside it
        if comparison is None and not args.no_compare:
            from editor.runtime import Runner
            from editor.surgery.compare import compare_models, inputs_for

            with Runner() as runner:  # from the files: external weights resolve there
                comparison = compare_models(runner, original, doc.model, inputs_for(original, dims=dims),
                                            sources=(str(args.model), str(args.output)))
        if comparison is not None:
            print("output error vs fp32 (same random inputs, onnxruntime CPU):")
            for e in comparison.errors:
                extra = f", {e.non_finite} non-finite mismatch(es)" if e.non_finite else ""
                print(f"  {e.name}: max abs {e.max_abs:.4g}, relative to the output's scale {e.max_rel:.3g}{extra}")
    finally:
        if doc.store is not None:
            doc.store.close()
    print(f"wrote {args.output}")
    if args.auto_mixed is not None and comparison is not None and not comparison.within(args.auto_mixed):
        return 1
    return 0


def _checker(path: str, source: str) -> None:
    """onnx.checker (full) on the written file; a refusal is an error unless the checker
    refuses the input model too (e.g. shape tensors stored as external data it cannot read)."""
    import onnx

    def refusal(p: str) -> str | None:
        try:
            onnx.checker.check_model(str(p), full_check=True)
        except Exception as exc:  # noqa: BLE001 - the checker's first line is the reason
            return first_line(exc)
        return None

    first = refusal(path)
    if first is None:
        return
    if refusal(source) is not None:
        print(f"note: onnx.checker refuses {source} as well, so its verdict on the result says little: {first}")
        return
    raise CommandError(f"wrote {path}, but onnx.checker refuses it: {first} (a bug: please report)")
