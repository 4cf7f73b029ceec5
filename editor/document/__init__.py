"""The editable document: ModelProto + index + commands + undo + events."""

from editor.document.changes import ChangeSet
from editor.document.document import Document
from editor.document.history import Command, CompositeCommand, FunctionCommand, Transaction, UndoStack
from editor.document.index import ModelIndex, NodeId, Scope, ScopeId

__all__ = [
    "ChangeSet",
    "Command",
    "CompositeCommand",
    "Document",
    "FunctionCommand",
    "ModelIndex",
    "NodeId",
    "Scope",
    "ScopeId",
    "Transaction",
    "UndoStack",
]
