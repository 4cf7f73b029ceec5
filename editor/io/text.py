"""The ONNX text syntax (``onnx.printer`` / ``onnx.parser``), in and out.

The text form is for reading and hand-editing small models. It does not carry everything a
binary model can (the printer drops doc strings, metadata, value_info of nested graphs and a
few attribute kinds), so the editor saves text only when asked; a text save parses back to an
equivalent graph (same nodes, inputs, outputs, initializers), which the tests check.
"""

from __future__ import annotations

import re

import onnx
import onnx.parser
import onnx.printer

from editor.errors import LoadError

#: File name suffixes that mean "text syntax" (checked case-insensitively).
TEXT_SUFFIXES = (".onnxtxt", ".txt")

_POSITION = re.compile(r"line:\s*(\d+)\s+column:\s*(\d+)")


def serialize_model_text(model: onnx.ModelProto) -> str:
    """The ONNX text syntax for ``model`` (tensor values inline)."""
    text = onnx.printer.to_text(model)
    return text if text.endswith("\n") else text + "\n"


def parse_model_text(text: str) -> onnx.ModelProto:
    """Parse ONNX text syntax; syntax errors raise :class:`LoadError` with line and column."""
    try:
        return onnx.parser.parse_model(text)
    except onnx.parser.ParseError as exc:
        raise LoadError(_describe(str(exc))) from None
    except Exception as exc:  # noqa: BLE001 - the C++ parser may throw other things
        raise LoadError(f"text syntax error: {type(exc).__name__}: {_describe(str(exc))}") from None


def _describe(message: str) -> str:
    # ParseError's text is the repr of a bytes object with escaped newlines:
    # "b'[ParseError at position (line: 1 column: 6)]\nError context: ...\nExpected ...'"
    cleaned = message
    if cleaned.startswith(("b'", 'b"')) and cleaned.endswith(("'", '"')):
        cleaned = cleaned[2:-1]
    lines = [ln.strip() for ln in cleaned.replace("\\n", "\n").splitlines() if ln.strip()]
    where = _POSITION.search(cleaned)
    what = lines[-1] if lines else "unknown error"
    if where:
        return f"text syntax error at line {where.group(1)}, column {where.group(2)}: {what}"
    return f"text syntax error: {what}"


def looks_like_text(data: bytes) -> bool:
    """True when ``data`` starts (after blank lines and ``#`` comments) with ``<`` as UTF-8 text."""
    head = data[:65536]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte char cut by the slice is fine
            return False
        text = head[: exc.start].decode("utf-8")
    text = text.lstrip("\ufeff")
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return stripped.startswith("<")
    return False
