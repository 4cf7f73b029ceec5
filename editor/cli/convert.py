"""``onnx-studio convert``: re-save a model through the document.

    onnx-studio convert IN OUT [--text] [--inline | --external-data FILE]
                               [--size-threshold BYTES] [--data-dir DIR] [--opset N]

Opens IN exactly as the editor does (:meth:`editor.document.Document.open`) and saves it to
OUT with :meth:`~editor.document.Document.save`, so what the CLI writes is what the GUI's
Save As writes:

* text syntax when ``--text`` is given or OUT ends in ``.onnxtxt`` / ``.txt`` (external
  weights are inlined into the text);
* ``--inline``: every weight inside the model file (refused past protobuf's 2 GB);
* ``--external-data FILE``: weights of at least ``--size-threshold`` bytes (default 1024)
  go to FILE, relative to OUT's folder; ``--size-threshold`` alone means the same with FILE
  named ``OUT.data``;
* neither: external data stays as it is (files copied beside OUT when it is elsewhere).

``--opset N`` converts the default-domain opset first (``onnx.version_converter``, the
window's Convert Opset); a conversion the converter refuses is an error and nothing is written.

The validator's errors are printed first; a model with errors is not written unless
``--allow-invalid`` is given.

Exit codes: 0 written; 1 the model has errors (nothing written without ``--allow-invalid``),
or the text written does not read back as the same model; 2 IN could not be opened or OUT
could not be written (one ``error:`` line on stderr; OUT and its data files are left as
they were).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from editor.cli.check import add_allow_invalid, gate_save
from editor.errors import SaveError

__all__ = ["add_parser", "run", "save_options"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("convert", help="re-save a model: binary <-> text, inline <-> external data",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="IN", help="the model to read (.onnx or text syntax)")
    p.add_argument("output", metavar="OUT", help="where to write it")
    p.add_argument("--text", action="store_true", help="write the ONNX text syntax (also implied by .onnxtxt/.txt)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--inline", action="store_true", help="store every weight inside the model file")
    group.add_argument("--external-data", metavar="FILE",
                       help="store weights of at least --size-threshold bytes in FILE (relative to OUT's folder)")
    p.add_argument("--size-threshold", type=int, metavar="BYTES",
                   help="smallest tensor (bytes) written to the external data file (default 1024)")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding IN's external data (default: IN's folder)")
    p.add_argument("--opset", type=int, metavar="N", help="convert the default-domain opset to N first")
    add_allow_invalid(p)
    return p


def save_options(args: argparse.Namespace):
    """The :class:`editor.io.SaveOptions` the command line asks for (validated)."""
    from editor.io import SaveOptions
    from editor.io.text import TEXT_SUFFIXES

    out = Path(args.output)
    text = args.text or out.suffix.lower() in TEXT_SUFFIXES
    threshold = args.size_threshold
    if threshold is not None and threshold < 0:
        raise SaveError(f"--size-threshold {threshold} is negative")
    wants_external = args.external_data is not None or threshold is not None
    if text and wants_external:
        raise SaveError(f"cannot write '{out}' as text with external data: the text syntax holds weights inline")
    if args.inline and threshold is not None:
        raise SaveError("--size-threshold applies to --external-data, not to --inline")
    fmt = "text" if text else "binary"
    if args.inline:
        return SaveOptions(format=fmt, external="inline")
    if wants_external:
        location = args.external_data if args.external_data is not None else out.name + ".data"
        if not location or location.endswith(("/", "\\")):
            raise SaveError(f"--external-data {location!r} names no file")
        return SaveOptions(
            format=fmt,
            external="single-file",
            location=location,
            size_threshold=1024 if threshold is None else threshold,
        )
    return SaveOptions(format=fmt, external="preserve")


def run(args: argparse.Namespace) -> int:
    from editor.document import Document

    options = save_options(args)  # refuse bad flags before reading anything
    doc = Document.open(args.input, data_dir=args.data_dir)
    try:
        if args.opset is not None:
            _convert_opset(doc, args.opset)
        gate_save(doc, allow_invalid=args.allow_invalid)
        doc.save(args.output, options=options)
        if options.format == "text":
            return _check_text_reads_back(doc, Path(args.output))
    finally:
        if doc.store is not None:
            doc.store.close()
    return 0


def _convert_opset(doc, target: int) -> None:  # noqa: ANN001 - Document
    """``--opset N``: the window's Convert Opset as one command; a refusal is an error."""
    from editor.passes import plan_convert_opset

    if target < 1:
        raise SaveError(f"--opset {target}: an opset is a positive number")
    plan = plan_convert_opset(doc, target)
    if plan.empty:
        if doc.opset("") == target:
            return
        raise SaveError(f"cannot convert to opset {target}: {'; '.join(plan.warnings) or 'nothing to convert'}")
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    doc.execute(plan.command)


def _check_text_reads_back(doc, out: Path) -> int:  # noqa: ANN001 - a Document
    """Parse the text just written and compare it with the model: 1 (with the differences
    on stderr) when it does not say the same, else 0."""
    import sys

    from editor.errors import LoadError
    from editor.io import tensor_to_numpy
    from editor.io.text import parse_model_text, text_differences

    try:
        parsed = parse_model_text(out.read_text(encoding="utf-8"))
    except LoadError as exc:
        differences = [f"it does not parse ({exc.message})"]
    else:
        differences = text_differences(doc.model, parsed, read_external=lambda t: tensor_to_numpy(t, doc.store))
    if not differences:
        return 0
    for line in differences:
        print(f"text: {line}", file=sys.stderr)
    print(f"error: '{out}' was written but does not read back as the same model (see above); "
          "keep the binary .onnx as the model", file=sys.stderr)
    return 1
