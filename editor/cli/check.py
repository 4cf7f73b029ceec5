"""``onnx-studio check MODEL [--json] [--full]``: list a model's problems.

Exit codes: 0 no errors (warnings and notes allowed), 1 at least one error, 2 the file
cannot be read (a :class:`~editor.errors.LoadError`, printed by the dispatcher as
``error: ...``).

The live checks (the same ones the editor runs after each edit) always run; ``--full`` adds
``onnx.checker`` (full) and strict shape inference with data propagation.
"""

from __future__ import annotations

import argparse
import os
import sys

from editor.document import Document
from editor.validation import Problem, Validator, full_check
from editor.validation.full import declared_dim_problems, raw_full_check, to_problems
from editor.validation.gate import InvalidModelError, describe_errors, save_errors
from editor.validation.problems import ERROR, INFO, WARNING, fold_notes, sort_key


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "check",
        help="validate a model and list its problems (exit 1 when there are errors)",
        description="Validate MODEL: operator schemas at the model's opset, names (SSA, undefined, "
        "order), declared vs inferred types. Exit 0 without errors, 1 with errors, 2 when the "
        "file cannot be read.",
    )
    p.add_argument("model", metavar="MODEL", help="the .onnx file")
    p.add_argument("--json", action="store_true", help="print the problems as a JSON list")
    p.add_argument("--full", action="store_true",
                   help="also run onnx.checker (full) and strict shape inference")
    return p


def load_document(path: str | os.PathLike) -> Document:
    """Open ``path`` as a document (the one place this command reads a file)."""
    return Document.open(path)


def check_document(doc: Document, *, full: bool = False) -> list[Problem]:
    """The live checks, declared shapes against inferred ones, and with ``full`` onnx's
    full checker and strict shape inference (errors first)."""
    problems = Validator(doc, live=False).validate_all()
    if full:
        path = doc.path
        if path is not None and doc.format == "binary" and not doc.is_modified:
            extra = to_problems(raw_full_check(path), doc)  # lets the checker see external data
        else:
            extra = full_check(doc.model, doc)
    else:
        extra = to_problems(declared_dim_problems(doc.model), doc)
    # the same finding from both: the live one names the value, the checker's may not
    seen = {(p.code, p.node_id, p.value) for p in problems} | {(p.code, p.node_id, None) for p in problems}
    problems = problems + [p for p in extra if (p.code, p.node_id, p.value) not in seen]
    return sorted(problems, key=sort_key)


def problem_record(doc: Document, p: Problem) -> dict:
    node = doc.index.nodes.get(p.node_id) if p.node_id is not None else None
    return {
        "severity": p.severity,
        "code": p.code,
        "message": p.message,
        "node": p.node_id,
        "node_name": node.name if node is not None else None,
        "op_type": node.op_type if node is not None else None,
        "value": p.value,
        "graph": p.graph,
        "source": p.source,
    }


def run(args: argparse.Namespace) -> int:
    doc = load_document(args.model)
    problems = check_document(doc, full=args.full)
    # an op no runtime knows: one line for all its nodes, not one per node
    folded = fold_notes(problems)
    if args.json:
        from editor.cli import emit_json

        emit_json([problem_record(doc, p) | ({"nodes": len(members)} if len(members) > 1 else {})
                   for p, members in folded])
    else:
        for p, _members in folded:
            where = p.graph or "model"
            print(f"{p.severity:7} {where}: {p.message} [{p.code}]")
        counts = {s: sum(1 for p, _ in folded if p.severity == s) for s in (ERROR, WARNING, INFO)}
        if problems:
            print(f"{counts[ERROR]} error(s), {counts[WARNING]} warning(s), {counts[INFO]} note(s)")
        else:
            print(f"{args.model}: no problems found")
    return 1 if any(p.severity == ERROR for p in problems) else 0


def add_allow_invalid(p: argparse.ArgumentParser) -> None:
    """The flag every saving subcommand takes."""
    p.add_argument("--allow-invalid", action="store_true",
                   help="write the model even when the validator finds errors (they are still printed)")


def gate_save(doc: Document, *, allow_invalid: bool, what: str = "the model") -> None:
    """Before a CLI save: print the errors the validator finds in ``doc`` (to stderr) and
    refuse with :class:`~editor.validation.gate.InvalidModelError` (exit 1, nothing
    written) unless ``allow_invalid``."""
    errors = save_errors(doc)
    if not errors:
        return
    for line in describe_errors(errors):
        print(f"invalid: {line}", file=sys.stderr)
    n = len(errors)
    if allow_invalid:
        print(f"warning: {what} has {n} error(s); writing it anyway (--allow-invalid)", file=sys.stderr)
        return
    raise InvalidModelError(f"{what} has {n} error(s) (listed above); nothing written "
                            "(--allow-invalid writes it anyway)")
