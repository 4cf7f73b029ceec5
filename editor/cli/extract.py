"""``onnx-studio extract``: cut part of a model out as a new standalone model.

    onnx-studio extract MODEL -o OUT.onnx --nodes NAME [NAME ...]
    onnx-studio extract MODEL -o OUT.onnx --inputs NAME [NAME ...] --outputs NAME [NAME ...]

``--nodes`` takes node names (or ``#ID`` node ids, as the GUI shows them); all must be in
the same graph. ``--inputs`` / ``--outputs`` take value names of the main graph and keep
the nodes between them (like ``onnx.utils.extract_model``). See
:mod:`editor.passes.extract` for what the new model holds.

External weights the extract uses are written to ``OUT.data`` beside OUT (only those, not
the whole original data file); a model without external weights is written as one file.

Exit codes: 0 written; 1 the names do not describe a cut (unknown or ambiguous node, value
that does not exist, inputs that do not cut the graph), or the extracted model has errors
(printed; nothing written unless ``--allow-invalid``); 2 MODEL could not be read or OUT
could not be written. Failures print one ``error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from editor.cli.check import add_allow_invalid, gate_save
from editor.errors import CommandError

__all__ = ["add_parser", "resolve_nodes", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("extract", help="extract a subgraph (nodes, or inputs -> outputs) as a new model",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", metavar="MODEL", help="the model to read (.onnx or text syntax)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the extracted model")
    p.add_argument("--nodes", nargs="+", metavar="NAME", help="node names (or #ID) to extract")
    p.add_argument("--inputs", nargs="+", metavar="NAME", help="value names that become the inputs")
    p.add_argument("--outputs", nargs="+", metavar="NAME", help="value names that become the outputs")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding MODEL's external data (default: its folder)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    add_allow_invalid(p)
    return p


def resolve_nodes(doc: Any, names: list[str]) -> list[int]:
    """Node ids for names (or ``#ID``); refuses unknown and ambiguous names."""
    ids: list[int] = []
    for name in names:
        if name.startswith("#") and name[1:].isdigit():
            nid = int(name[1:])
            if not doc.has_node(nid):
                raise CommandError(f"no node with id {name!r}")
            ids.append(nid)
            continue
        found = doc.find_nodes(name)
        if not found:
            raise CommandError(f"no node named {name!r}")
        if len(found) > 1:
            raise CommandError(f"{len(found)} nodes are named {name!r}; use #ID ({', '.join(f'#{i}' for i in found)})")
        ids.append(found[0])
    return ids


def run(args: argparse.Namespace) -> int:
    from editor.document import Document
    from editor.io import SaveOptions, save_model
    from editor.io.tensors import iter_tensors, uses_external_data
    from editor.passes.extract import extract_model

    if args.nodes and (args.inputs or args.outputs):
        raise CommandError("give --nodes, or --inputs with --outputs, not both")
    if not args.nodes and not (args.inputs and args.outputs):
        raise CommandError("give --nodes NAME ..., or both --inputs NAME ... and --outputs NAME ...")
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        if args.nodes:
            ids = resolve_nodes(doc, args.nodes)
            model = extract_model(doc, node_ids=ids, scope=doc.index.node_scope[ids[0]], inline_external=False)
        else:
            model = extract_model(doc, inputs=args.inputs, outputs=args.outputs, inline_external=False)
        out = Path(args.output)
        gate_save(Document(model), allow_invalid=args.allow_invalid, what="the extracted model")
        external = any(uses_external_data(s.tensor) for s in iter_tensors(model))
        options = (SaveOptions(format="binary", external="single-file", location=out.name + ".data")
                   if external else SaveOptions(format="auto", external="inline"))
        save_model(model, out, store=doc.store, options=options)
    finally:
        if doc.store is not None:
            doc.store.close()
    if not args.quiet:
        g = model.graph
        inits = {t.name for t in g.initializer}
        print(f"wrote {out}: {len(g.node)} nodes; inputs: {', '.join(i.name for i in g.input if i.name not in inits) or '-'}; "
              f"outputs: {', '.join(o.name for o in g.output)}", file=sys.stdout)
    return 0
