"""``onnx-studio merge``: chain two models, A's outputs feeding B's inputs.

    onnx-studio merge A.onnx B.onnx -o OUT.onnx [--map A_OUT=B_IN ...] [--outputs NAME ...]

Without ``--map``, B's inputs are fed by A's outputs (and inputs) of the same name and type.
Names of B that A already uses are renamed (the renames are printed); differing default
opsets are reconciled with the version converter, or the merge is refused with the reason.
Outputs: B's plus A's that no mapping consumes, unless ``--outputs`` names them.
Exit codes: 0 written; 1 refused; 2 a model unreadable or OUT not writable.
"""

from __future__ import annotations

import argparse
from typing import Any

from editor.errors import CommandError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("merge", help="chain two models: outputs of A feed inputs of B",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A", help="the first model")
    p.add_argument("b", metavar="B", help="the model fed by A")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the merged model")
    p.add_argument("--map", action="append", default=[], metavar="A_OUT=B_IN", help="wire A's value to B's input")
    p.add_argument("--outputs", nargs="+", metavar="NAME", help="the merged model's outputs")
    from editor.cli.check import add_allow_invalid

    add_allow_invalid(p)
    return p


def run(args: argparse.Namespace) -> int:
    from editor.document import Document
    from editor.surgery.merge import MergeModel

    mapping: dict[str, str] | None = None
    if args.map:
        mapping = {}
        for item in args.map:
            src, sep, dst = item.partition("=")
            if not sep or not src or not dst:
                raise CommandError(f"expected A_OUT=B_IN, got {item!r}")
            mapping[src] = dst
    doc = Document.open(args.a)
    other = Document.open(args.b)
    try:
        cmd = MergeModel(other.model, mapping, outputs=args.outputs, other_store=other.store)
        doc.execute(cmd)
        from editor.cli.check import gate_save

        gate_save(doc, allow_invalid=args.allow_invalid)  # a model with errors is not written silently
        doc.save(args.output)
    finally:
        for d in (doc, other):
            if d.store is not None:
                d.store.close()
    assert cmd.result is not None
    for note in cmd.result.notes:
        print(f"note: {note}")
    wired = ", ".join(f"{a} -> {b}" for a, b in cmd.result.mapping.items())
    outs = ", ".join(o.name for o in doc.model.graph.output)
    print(f"wrote {args.output}: {len(doc.model.graph.node)} nodes; wired {wired}; outputs {outs}")
    return 0
