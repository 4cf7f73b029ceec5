"""``onnx-studio set-dim``: make input dims symbolic or fixed, and make the graph follow.

    onnx-studio set-dim IN -o OUT NAME:AXIS=VALUE ... [--force] [--no-check]

VALUE is a size (``input:0=4``) or a symbol (``input:0=batch``). Making a fixed dim
symbolic rewrites the Reshape/Expand constants that pinned the old size (see
:mod:`editor.passes.dims`); constants it cannot rewrite are listed and the command refuses
unless ``--force``. Then it runs the result at two sizes to check that an output dim
follows, and at the old size to check that outputs are unchanged (``--no-check`` skips).

Exit codes: 0 written; 1 pins left or the check failed (OUT not written); 2 bad arguments
or unreadable IN / unwritable OUT.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("set-dim", help="set input/output dims (symbolic or fixed) so the graph follows them",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="IN", help="the model")
    p.add_argument("specs", metavar="NAME:AXIS=VALUE", nargs="+", help="a dim to set (VALUE: size or symbol)")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="where to write the result")
    p.add_argument("--force", action="store_true", help="write even when pinning constants remain")
    p.add_argument("--no-check", action="store_true", help="do not run the model to check the result")
    return p


def run(args: argparse.Namespace) -> int:
    from editor.document import Document
    from editor.passes.apply import ApplyModel
    from editor.passes.dims import check_dims_follow, parse_dim_spec, plan_dims

    specs = [parse_dim_spec(s) for s in args.specs]
    src = Path(args.input)
    doc = Document.open(src)
    try:
        plan = plan_dims(doc.model, specs)
        for line in plan.changes:
            print(line)
        for line in plan.unresolved:
            print(f"pinned: {line}")
        if plan.unresolved and not args.force:
            print(f"error: {len(plan.unresolved)} constant(s) still pin the old size; not writing "
                  f"{args.output} (--force writes anyway)", file=sys.stderr)
            return 1
        olds = plan.symbols
        if olds and not args.no_check:
            check = check_dims_follow(doc.model, plan.model, olds, base_dir=str(src.resolve().parent))
            print(f"check: {check.message}")
            if not check.ok and not args.force:
                print(f"error: the check failed; not writing {args.output} (--force writes anyway)", file=sys.stderr)
                return 1
        elif not olds:
            print("note: no fixed dim became symbolic: nothing to check")
        doc.execute(ApplyModel(plan.model, "Set dims"))
        doc.save(args.output)
    finally:
        if doc.store is not None:
            doc.store.close()
    return 0
