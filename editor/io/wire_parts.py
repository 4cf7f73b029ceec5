"""A model's serialized bytes in small pieces, so writing a big model can be spread out.

``b"".join(serialized_parts(model)) == model.SerializeToString()``: protobuf's wire format
is each set field in field-number order, a length-delimited field being its tag, its length
and its bytes, and a repeated field its elements one after the other. So the graph can be
emitted field by field and its node and initializer lists element by element, each piece
serialized on its own. One ``SerializeToString`` of a 219 MB model holds the caller for
about 0.75 s; this generator yields after each piece (the largest is one tensor), so a
GUI can serialize between frames and stop when the model changes under it.

Only the main graph is split: a node (with any bodies it holds) and every other field are
one piece each. A model or graph carrying fields this onnx does not know is one piece (the
field-by-field copy would drop them).
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from editor.io.encode import tag, varint

_LENGTH_DELIMITED = 2
#: graph fields emitted element by element (the ones that grow with the model)
_SPLIT_GRAPH_FIELDS = frozenset({"node", "initializer", "sparse_initializer", "value_info"})


def _delimited(number: int, data: bytes) -> bytes:
    return tag(number, _LENGTH_DELIMITED) + varint(len(data)) + data


def _one_field(msg: Message, name: str) -> bytes:
    """``msg``'s field ``name`` alone, serialized (a fresh message holding only that field)."""
    tmp = type(msg)()
    value = getattr(msg, name)
    field = msg.DESCRIPTOR.fields_by_name[name]
    if field.is_repeated:
        getattr(tmp, name).extend(value)
    elif field.message_type is not None:
        getattr(tmp, name).CopyFrom(value)
    else:
        setattr(tmp, name, value)
    return tmp.SerializeToString()


def serialized_parts(model: onnx.ModelProto) -> Iterator[bytes]:
    """Pieces whose concatenation is ``model.SerializeToString()``. Do not change the model
    between two ``next()`` calls (the pieces would describe two different models)."""
    if len(UnknownFieldSet(model)) or (model.HasField("graph") and len(UnknownFieldSet(model.graph))):
        # fields this onnx does not know (a newer writer's) are kept only by a whole serialize
        yield model.SerializeToString()
        return
    for field, _value in model.ListFields():
        if field.name != "graph":
            yield _one_field(model, field.name)
            continue
        # the graph's length prefix needs its size: serialize its pieces first (lazily would
        # need ByteSize(), which serializes the whole graph to count)
        pieces: list[bytes] = []
        for field_, value in model.graph.ListFields():
            if field_.name in _SPLIT_GRAPH_FIELDS:
                for element in value:
                    pieces.append(_delimited(field_.number, element.SerializeToString()))
                    yield b""  # a point where the caller may pause
            else:
                pieces.append(_one_field(model.graph, field_.name))
        yield tag(field.number, _LENGTH_DELIMITED) + varint(sum(map(len, pieces)))
        yield from pieces
