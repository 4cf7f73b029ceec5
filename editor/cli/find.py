"""``onnx-studio find``: search a model with the Find panel's query language.

    onnx-studio find MODEL QUERY [--regex] [--case] [--json]

QUERY is names and predicates (``op:Conv attr:group>1``, ``dtype:float16``,
``shape:[*,3,*,*]``, ``rank:4``, ``dim:batch``, ``domain:com.microsoft``; see
:mod:`editor.find`). ``--json`` prints ``{"matches": [{"kind", "name", "graph", "op_type"}]}``.

Exit codes: 0 something matched; 1 nothing did; 2 the model could not be read or the query
could not be understood (one ``error:`` line).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("find", help="find nodes and values by name, op, attribute, dtype or shape",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="the model file")
    p.add_argument("query", nargs="+", help="names and predicates, e.g. op:Conv attr:group>1")
    p.add_argument("--regex", action="store_true", help="names and op: are regular expressions")
    p.add_argument("--case", action="store_true", help="match case")
    p.add_argument("--json", action="store_true", help="print the matches as JSON")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding the external data (default: the model's folder)")
    return p


def run(args: argparse.Namespace) -> int:
    from editor.cli import emit_json
    from editor.document import Document
    from editor.errors import StudioError
    from editor.find import QueryError, search

    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        hits = search(doc, " ".join(args.query), regex=args.regex, case=args.case, limit=10**9)
    except QueryError as exc:
        err = StudioError(str(exc))
        err.exit_code = 2
        raise err from None
    finally:
        if doc.store is not None:
            doc.store.close()
    if args.json:
        emit_json({"matches": [h.to_json() for h in hits]})
    else:
        for h in hits:
            print(f"{h.kind:<11} {h.name or '(' + (h.op_type or '') + ')'}  {h.op_type or ''}  {h.graph}")
        print(f"{len(hits)} match{'es' if len(hits) != 1 else ''}")
    return 0 if hits else 1
