"""``onnx-studio shapes``: the element type and shape of every value, symbolic where dynamic.

    onnx-studio shapes MODEL [--dim NAME=VALUE ...] [--json] [-o OUT.onnx [--mode update|add|strip]]

Shapes come from ONNX Studio's shape engine (:mod:`editor.shapes`): named dims kept and
carried through arithmetic, formulas such as ``floor((height - 1)/2) + 1``; ``--dim`` fixes
named dims. ``--json`` prints ``{"values": [{"name", "graph", "dtype", "shape", "source"}]}``
(:func:`editor.shapes.declare.values_json`). ``-o`` writes the model with its value_info
refreshed (the same undoable command as Model ▸ Refresh Shapes in the window).

Exit codes: 0 printed; 1 with ``-o``, the model has errors (printed; nothing written unless
``--allow-invalid``); 2 the model could not be opened (one ``error:`` line).
"""

from __future__ import annotations

import argparse
from typing import Any

from editor.cli.check import add_allow_invalid, gate_save

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("shapes", help="type and (symbolic) shape of every value",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="the model file")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="value of a named dim (repeatable)")
    p.add_argument("--json", action="store_true", help="print the values as JSON")
    p.add_argument("-o", "--output", metavar="OUT.onnx", help="write the model with value_info refreshed")
    p.add_argument("--mode", choices=("update", "add", "strip"), default="update",
                   help="with -o: correct and add entries (default), only add missing ones, or strip them all")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding the external data (default: the model's folder)")
    add_allow_invalid(p)
    return p


def run(args: argparse.Namespace) -> int:
    from editor.cli import emit_json
    from editor.cli.info_cost import parse_dims
    from editor.commands.shapes import RefreshShapes
    from editor.document import Document
    from editor.shapes import infer_model
    from editor.shapes.declare import values_json

    dims = parse_dims(args.dim)
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        data = values_json(doc.model, infer_model(doc.model, dims))
        if args.output:
            doc.execute(RefreshShapes(args.mode, dims))
            gate_save(doc, allow_invalid=args.allow_invalid)
            doc.save(args.output)
    finally:
        if doc.store is not None:
            doc.store.close()
    if args.json:
        emit_json(data)
        return 0
    rows = [(v["graph"], v["name"], v["dtype"] or "?", _shape(v["shape"]), v["source"]) for v in data["values"]]
    widths = [min(48, max((len(r[k]) for r in rows), default=0)) for k in range(4)]
    for r in rows:
        print("  ".join(c[:48].ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    known = sum(1 for v in data["values"] if v["shape"] is not None and None not in v["shape"])
    print(f"{len(rows)} values, {known} with a full shape")
    if args.output:
        print(f"wrote {args.output} (value_info: {args.mode})")
    return 0


def _shape(shape: list | None) -> str:
    if shape is None:
        return "?"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
