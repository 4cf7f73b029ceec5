"""onnxruntime's own warnings, caught in the run worker and handed back with the result.

onnxruntime logs through C++ straight to file descriptor 2 of the process that runs it (the
Python binding offers no log callback). The worker used to silence it (severity 4: fatal
only), so a detector returning ``[1, 10647, 6]`` against a declared ``[batch, 3549, 6]``
ran with its "Error merging shape info for output" warning swallowed. Now the worker logs
warnings and this module catches them: fd 2 points at a temporary file while a session is
created and run, and the ``[W:onnxruntime:...]`` lines come back as plain messages.

NOTE: only the worker (a child process of its own) uses :func:`capture_warnings`; moving
fd 2 in the editor's process would hide everything else it writes there.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator

#: one log record: "\x1b[0;93m2026-01-01 12:00:00.1 [W:onnxruntime:, graph.cc:128 Fn] msg\x1b[m"
#: (a message can span lines; without colour a record ends where the next one starts)
_RECORD = re.compile(
    r"(?:\x1b\[[0-9;]*m)?\d{4}-\d\d-\d\d[ T][\d:.]+ \[([A-Z]):onnxruntime:[^\]]*\]\s*(.*?)"
    r"(?:\x1b\[m|(?=\n(?:\x1b\[[0-9;]*m)?\d{4}-\d\d-\d\d)|\Z)",
    re.S,
)
#: the most warnings kept from one run (a model can warn per initializer)
MAX_WARNINGS = 50


def parse_warnings(text: str) -> list[str]:
    """The messages of onnxruntime's warning records in ``text``, in order, without repeats."""
    out: list[str] = []
    for level, message in _RECORD.findall(text):
        message = " ".join(message.split())
        if level == "W" and message and message not in out:
            out.append(message)
    if len(out) > MAX_WARNINGS:
        out = out[:MAX_WARNINGS] + [f"... and {len(out) - MAX_WARNINGS} more warnings"]
    return out


def without_records(text: str) -> str:
    """``text`` less onnxruntime's log records (what else was written to fd 2)."""
    return _RECORD.sub("", text)


class Captured:
    """What :func:`capture_warnings` caught (filled when the block ends)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.other: str = ""


@contextlib.contextmanager
def capture_warnings() -> Iterator[Captured]:
    """Point fd 2 at a temporary file for the block; onnxruntime's warnings land in the
    yielded :class:`Captured`, anything else written there is passed on to the real fd 2."""
    captured = Captured()
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no fd 2 to move (an embedded interpreter): nothing to catch
        yield captured
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield captured
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace")
            captured.warnings = parse_warnings(text)
            rest = without_records(text).strip()
            if rest:
                captured.other = rest
                with contextlib.suppress(OSError):
                    os.write(2, (rest + "\n").encode("utf-8", "replace"))
