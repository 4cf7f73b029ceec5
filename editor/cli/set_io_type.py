"""``onnx-studio set-io-type``: change graph input/output element types, Cast inside the model.

    onnx-studio set-io-type IN.onnx -o OUT.onnx NAME=DTYPE [NAME=DTYPE ...] [--allow-lossy]

e.g. ``input_ids=int32`` for TensorRT. A change where values would not fit (an int64
output as int32, a float input as an integer) is refused unless ``--allow-lossy`` says so.
Exit codes: 0 written; 1 refused; 2 IN unreadable or OUT not writable.
"""

from __future__ import annotations

import argparse
from typing import Any

from editor.errors import CommandError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("set-io-type",
                              help="change a graph input's or output's element type, with a Cast inside the model",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", metavar="IN", help="the model to change")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the result")
    p.add_argument("types", nargs="+", metavar="NAME=DTYPE", help="an input or output and its new element type")
    p.add_argument("--allow-lossy", action="store_true", help="cast even where values may not fit")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding IN's external data (default: its folder)")
    from editor.cli.check import add_allow_invalid

    add_allow_invalid(p)
    return p


def run(args: argparse.Namespace) -> int:
    from editor.document import Document
    from editor.surgery.io_types import SetIOTypes, parse_dtype

    types: dict[str, int] = {}
    for item in args.types:
        name, sep, dtype = item.rpartition("=")
        if not sep or not name:
            raise CommandError(f"expected NAME=DTYPE, got {item!r}")
        types[name] = parse_dtype(dtype)
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        doc.execute(SetIOTypes(types, allow_lossy=args.allow_lossy))
        from editor.cli.check import gate_save

        gate_save(doc, allow_invalid=args.allow_invalid)  # a model with errors is not written silently
        doc.save(args.output)
    finally:
        if doc.store is not None:
            doc.store.close()
    print(f"wrote {args.output}: " + ", ".join(f"{n} -> {d}" for n, d in (t.split("=", 1) for t in args.types)))
    return 0
