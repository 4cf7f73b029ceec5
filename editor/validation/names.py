"""Names a file should not have: not UTF-8, empty where required, control characters, absurd
lengths. Reported as problems of the node, which is named by its position, since its name
may be the very thing that cannot be shown.

Invalid UTF-8 reaches this module already repaired by the loader (``editor.io.names``): the
U+FFFD replacement character marks it, as no exporter writes U+FFFD into a name on purpose.
"""

from __future__ import annotations

import re

import onnx

from editor.validation.problems import ERROR, WARNING

__all__ = ["MAX_NAME", "name_problems", "short"]

#: Longer names are reported (and shown cut); real exporters stay far below.
MAX_NAME = 4096
_SHOWN = 60
#: C0 and C1 control characters and DEL; a regex, since every name of every node is searched
#: on each full check (a per-character Python loop was 3 s of a 1,700-node model's checks)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def short(name: str) -> str:
    """``name`` quoted for a message: control characters escaped, long names cut."""
    if len(name) > _SHOWN:
        return repr(name[:_SHOWN]) + f"… ({len(name):,} characters)"
    return repr(name)


def _issues(text: str, severity: str) -> list[tuple[str, str]]:
    out = []
    if "\ufffd" in text:
        out.append((severity, "is not valid UTF-8 in the file (shown with \ufffd)"))
    if _CONTROL.search(text):
        out.append((WARNING, "contains control characters"))
    if len(text) > MAX_NAME:
        out.append((WARNING, f"is {len(text):,} characters long"))
    return out


def name_problems(node: onnx.NodeProto, where: str) -> list[tuple[str, str, str]]:
    """(severity, code, message) for every bad name of ``node``; ``where`` is 'node #3'."""
    out: list[tuple[str, str, str]] = []
    if not node.op_type:
        out.append((ERROR, "bad-name", f"{where}: the operator type is empty"))
    # NOTE: an operator type or domain that is not UTF-8 is an error (onnx's checker and
    # onnxruntime refuse the model); in names they accept it, so it is a warning there
    fields = [("operator type", node.op_type, ERROR), ("domain", node.domain, ERROR), ("name", node.name, WARNING)]
    fields += [(f"input {k}", n, WARNING) for k, n in enumerate(node.input)]
    fields += [(f"output {k}", n, WARNING) for k, n in enumerate(node.output)]
    fields += [(f"attribute {k}", a.name, WARNING) for k, a in enumerate(node.attribute)]
    for what, text, utf8_severity in fields:
        for severity, issue in _issues(text, utf8_severity):
            out.append((severity, "bad-name", f"{where}: {what} {short(text)} {issue}"))
    return out
