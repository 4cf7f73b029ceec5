"""``onnx-studio diff``: compare two models structurally.

    onnx-studio diff A.onnx B.onnx [--json] [--rtol R] [--atol A] [--status] [--render OUT.svg|OUT.png|OUT.html]

Prints a human summary (one change per line: ``+`` added, ``-`` removed, ``~`` changed) or,
with ``--json``, the whole :class:`editor.diff.ModelDiff` (``--status`` adds the per-node
status maps, which are large). See :mod:`editor.diff` for how nodes are matched.
``--render`` (drawing needs Qt: the application layer adds it, :mod:`widgets.diffview.render`)
draws both models side by side, coloured by the diff.

Exit codes (like ``diff(1)``): 0 the models are the same; 1 they differ; 2 one of them could
not be read.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "check_tolerances", "report", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("diff", help="compare two models (exit 0 same, 1 different, 2 unreadable)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A", help="the first (old) model")
    p.add_argument("b", metavar="B", help="the second (new) model")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--status", action="store_true", help="with --json: include the per-node status maps")
    p.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance for initializer values (default 1e-5)")
    p.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance for initializer values (default 1e-8)")
    return p


def check_tolerances(args: argparse.Namespace) -> None:
    from editor.errors import StudioError

    if args.rtol < 0 or args.atol < 0:
        error = StudioError(f"tolerances must not be negative (--rtol {args.rtol}, --atol {args.atol})")
        error.exit_code = 2  # 1 means "the models differ"
        raise error


def run(args: argparse.Namespace) -> int:
    from editor.diff import diff_models
    from editor.document import Document

    check_tolerances(args)
    docs = []
    try:
        for path in (args.a, args.b):
            docs.append(Document.open(path))
        result = diff_models(docs[0], docs[1], rtol=args.rtol, atol=args.atol)
    finally:
        for doc in docs:
            if doc.store is not None:
                doc.store.close()
    return report(result, args)


def report(result, args: argparse.Namespace) -> int:  # noqa: ANN001 - an editor.diff.ModelDiff
    """Print ``result`` as the options ask; the exit code (0 the same, 1 different)."""
    from editor.cli import emit_json

    if args.json:
        data = result.to_dict()
        if not args.status:
            for key in ("status_a", "status_b", "pairs"):
                data.pop(key)
        emit_json(data)
    else:
        for line in result.summary_lines():
            print(line)
    return 0 if result.identical else 1
