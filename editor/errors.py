"""Typed errors of the core.

Every error a user can cause carries a one-line message that quotes the offending value
(a path, a name, a number); the CLI prints it as ``error: <message>`` and the GUI shows the
same line in a dialog, with ``details`` on demand. Nothing here is raised for problems a
model merely *has* (those are :class:`editor.validation.Problem` records); errors are for
things that cannot be done at all.
"""

from __future__ import annotations


class StudioError(Exception):
    """Base of every error the core raises on purpose.

    ``message`` is one line, suitable after ``error:``; ``details`` is optional longer text
    (a traceback of the underlying library, a list of offending tensors ...).
    """

    exit_code: int = 1

    def __init__(self, message: str, *, details: str | None = None) -> None:
        super().__init__(message)
        self.message = message.splitlines()[0] if message else type(self).__name__
        self.details = details

    def __str__(self) -> str:
        return self.message


class LoadError(StudioError):
    """The file cannot be opened as an ONNX model (missing, corrupt, unsafe external data)."""

    exit_code = 2


class ExternalDataError(LoadError):
    """An external-data reference is missing, short, or points outside the model's folder."""


class SaveError(StudioError):
    """The model could not be written; the previous file on disk is untouched."""

    exit_code = 2


class CommandError(StudioError):
    """An edit was refused before anything changed; the document is exactly as it was."""


class RuntimeBackendError(StudioError):
    """A backend could not load or run a model (it says which backend and why)."""


class GenerationError(StudioError):
    """Text generation cannot go on: not a decoder, no tokenizer, a step that failed."""

    exit_code = 2


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, its type's name when it has none: what a note
    or a one-line error says about a library's exception (the rest is traceback detail)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
