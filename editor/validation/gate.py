"""What a save must say: the errors the validator knows about, before a model is written.

A script that deletes a Cast with reconnect, or sets a 2-D Conv's ``pads`` to ``[1, 1]``,
used to save with exit 0 a model its own live checks reject (and onnxruntime refuses).
Every saving path now asks :func:`save_errors` first: the CLI prints the errors and writes
nothing unless ``--allow-invalid``; the window asks before it saves.

NOTE: the live checks always run (what the Problems panel shows); onnx's full checker runs
too when the model holds all its weights in memory and fits protobuf's 2 GB, because it
sees across nodes what the per-node checks cannot (a Conv whose input type is computed).
Its errors are only ones onnx itself stands behind (see :mod:`editor.validation.full`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx

from editor.errors import StudioError
from editor.validation.full import full_check
from editor.validation.problems import Problem, sort_key
from editor.validation.validator import Validator

if TYPE_CHECKING:
    from editor.document import Document

#: the full check is skipped past this size (protobuf cannot serialize 2 GB)
_FULL_CHECK_LIMIT = 1 << 30


class InvalidModelError(StudioError):
    """A save refused because the model has errors (``--allow-invalid`` saves anyway)."""

    exit_code = 1


def _weights_in_memory(model: onnx.ModelProto) -> bool:
    from editor.io.tensors import iter_tensors, uses_external_data

    return not any(uses_external_data(site.tensor) for site in iter_tensors(model))


def save_errors(doc: Document, *, validator: Validator | None = None, full: bool = True) -> list[Problem]:
    """The errors a save of ``doc`` would write: the live checks' (``validator``'s when
    given, else a fresh pass) plus, where it can run, the full check's."""
    if validator is None:
        problems = Validator(doc, live=False).validate_all()
    else:
        # a live validator whose first pass is still under way (a big model's, in steps
        # after its first picture) finishes it here: a save must not skip the checks
        problems = validator.problems if validator.ready else validator.validate_all()
    errors = [p for p in problems if p.is_error]
    if full and doc.model.ByteSize() < _FULL_CHECK_LIMIT and _weights_in_memory(doc.model):
        # one line per problem: a node the live checks already fault is not faulted twice
        nodes = {p.node_id for p in errors if p.node_id is not None}
        codes = {p.code for p in errors if p.node_id is None}
        for p in full_check(doc.model, doc):
            if p.is_error and (p.node_id not in nodes if p.node_id is not None else p.code not in codes):
                errors.append(p)
    return sorted(errors, key=sort_key)


def describe_errors(errors: list[Problem], limit: int = 20) -> list[str]:
    """One line per error (at most ``limit``, then a count of the rest)."""
    lines = [f"{p.graph or 'model'}: {p.message} [{p.code}]" for p in errors[:limit]]
    if len(errors) > limit:
        lines.append(f"... and {len(errors) - limit} more")
    return lines
