"""Every edit of a document, as a command with undo.

Each command checks its preconditions before it changes anything (a refused edit raises
:class:`~editor.errors.CommandError` and leaves the document exactly as it was) and is
undone exactly by replaying the inverses of the primitive ops it applied.
"""

from editor.commands.attributes import RemoveAttribute, SetAttribute
from editor.commands.graph_io import AddGraphValue, MoveGraphValue, RemoveGraphValue
from editor.commands.initializers import (
    AddInitializer,
    CastInitializer,
    ConstantToInitializer,
    InitializerToConstant,
    RemoveInitializer,
    ReplaceInitializer,
    SetConstantValue,
)
from editor.commands.metadata import SetGraphField, SetMetadataProp, SetModelField, SetOpsetImport
from editor.commands.nodes import AddNode, AddNodePort, DeleteNodes, RemoveNodePort, SetNodeField, SetNodeInput
from editor.commands.shapes import RefreshShapes
from editor.commands.values import RenameValue, SetDimension, SetValueType
from editor.document.history import CompositeCommand, FunctionCommand

__all__ = [
    "AddGraphValue",
    "AddInitializer",
    "AddNode",
    "AddNodePort",
    "CastInitializer",
    "CompositeCommand",
    "ConstantToInitializer",
    "DeleteNodes",
    "FunctionCommand",
    "InitializerToConstant",
    "MoveGraphValue",
    "RemoveAttribute",
    "RemoveGraphValue",
    "RemoveInitializer",
    "RemoveNodePort",
    "RefreshShapes",
    "RenameValue",
    "ReplaceInitializer",
    "SetAttribute",
    "SetConstantValue",
    "SetDimension",
    "SetGraphField",
    "SetMetadataProp",
    "SetModelField",
    "SetNodeField",
    "SetNodeInput",
    "SetOpsetImport",
    "SetValueType",
]
