"""A model's serialized bytes in small pieces, so writing a big model can be spread out.

``b"".join(serialized_parts(model)) == model.SerializeToString()``: protobuf's wire format
is each set field in field-number order, a length-delimited field being its tag, its length
and its bytes, and a repeated field its elements one after the other. So the graph can be
emitted field by field and its node and initializer lists element by element, each piece
serialized on its own. One ``SerializeToString`` of a 219 MB model holds the caller for
about 0.75 s; this generator yields after each piece, so a GUI can serialize between
frames and stop when the model changes under it.

Only the main graph is split: a node (with any bodies it holds) and every other field are
one piece each. A model or graph carrying fields this onnx does not know is one piece (the
field-by-field copy would drop them).

A weight of ``LARGE_RAW`` bytes or more is three pieces: its fields before ``raw_data``,
the raw bytes themselves, and the fields after them. Serializing the tensor whole copies
its bytes twice (into protobuf's buffer, then into a Python ``bytes``), and one such piece
of a 16 MB embedding held the window 17-40 ms; reading ``raw_data`` copies them once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import onnx
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet

from editor.io.encode import tag, varint

_LENGTH_DELIMITED = 2
#: graph fields emitted element by element (the ones that grow with the model)
_SPLIT_GRAPH_FIELDS = frozenset({"node", "initializer", "sparse_initializer", "value_info"})
#: raw weight bytes from which a tensor is emitted around its bytes (see the docstring)
LARGE_RAW = 1 << 20
_RAW_DATA = onnx.TensorProto.DESCRIPTOR.fields_by_name["raw_data"].number


def _delimited(number: int, data: bytes) -> bytes:
    return tag(number, _LENGTH_DELIMITED) + varint(len(data)) + data


def _copy_field(dst: Message, field, value) -> None:
    """Set ``field`` of ``dst`` to ``value`` (as ``ListFields`` gives them)."""
    name = field.name
    if field.is_repeated:
        getattr(dst, name).extend(value)
    elif field.message_type is not None:
        getattr(dst, name).CopyFrom(value)
    else:
        setattr(dst, name, value)


def _one_field(msg: Message, name: str) -> bytes:
    """``msg``'s field ``name`` alone, serialized (a fresh message holding only that field)."""
    tmp = type(msg)()
    _copy_field(tmp, msg.DESCRIPTOR.fields_by_name[name], getattr(msg, name))
    return tmp.SerializeToString()


def _large_raw(tensor: onnx.TensorProto) -> bool:
    """Whether ``tensor`` holds ``raw_data`` of about ``LARGE_RAW`` bytes or more, judged from
    its dims (reading ``raw_data`` to measure it would copy it)."""
    if not tensor.HasField("raw_data") or len(UnknownFieldSet(tensor)):
        return False
    # elements, not bytes: near enough to choose how to emit it (the bytes are the same)
    return math.prod(tensor.dims) >= LARGE_RAW


def _tensor_pieces(number: int, tensor: onnx.TensorProto) -> Iterator[bytes]:
    """Field ``number`` holding ``tensor``, as its head, its raw bytes and its tail."""
    raw = tensor.raw_data
    head, tail = onnx.TensorProto(), onnx.TensorProto()
    for field, value in tensor.ListFields():
        if field.number != _RAW_DATA:
            _copy_field(head if field.number < _RAW_DATA else tail, field, value)
    before = head.SerializeToString() + tag(_RAW_DATA, _LENGTH_DELIMITED) + varint(len(raw))
    after = tail.SerializeToString()
    yield tag(number, _LENGTH_DELIMITED) + varint(len(before) + len(raw) + len(after)) + before
    yield raw
    if after:
        yield after


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
                    if field_.name == "initializer" and _large_raw(element):
                        pieces += _tensor_pieces(field_.number, element)
                    else:
                        pieces.append(_delimited(field_.number, element.SerializeToString()))
                    yield b""  # a point where the caller may pause
            else:
                pieces.append(_one_field(model.graph, field_.name))
        yield tag(field.number, _LENGTH_DELIMITED) + varint(sum(map(len, pieces)))
        yield from pieces
