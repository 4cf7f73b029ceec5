"""Protobuf re-encoding of a model with some tensors swapped, without touching the model.

Saving with external data means writing a model whose big tensors carry a location instead
of bytes (or the reverse). Rewriting those tensors in the caller's proto and restoring them
afterwards would be observable from other threads and, with upb's arenas, would grow the
proto's memory by every byte it re-set. Copying the model would double its size.

NOTE: instead, :func:`encode_with` serializes the model *around* the swapped tensors. A
protobuf message is the concatenation of its encoded fields in any order, so for each message
on the path from the model to a swapped tensor we encode its scalar fields through an empty
message of the same type, each untouched sub-message with its own ``SerializeToString()``
(C speed, shared nothing), unknown fields verbatim, and the swapped tensors from the bytes the
caller supplies. The result parses to exactly the model with those tensors replaced.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

try:  # protobuf >= 4.21
    from google.protobuf.unknown_fields import UnknownFieldSet
except ImportError:  # pragma: no cover - every supported protobuf has it
    UnknownFieldSet = None  # type: ignore[assignment,misc]

_MESSAGE_TYPES = (FieldDescriptor.TYPE_MESSAGE,)  # ONNX has no proto2 groups
_U64 = (1 << 64) - 1

#: A trie of substitutions: ``(field, index)`` -> replacement bytes or a deeper trie.
Trie = dict[tuple[str, "int | None"], Any]


def varint(value: int) -> bytes:
    value &= _U64
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def tag(field_number: int, wire_type: int) -> bytes:
    return varint((field_number << 3) | wire_type)


def _encode_unknown(out: bytearray, fields: Any) -> None:
    for f in fields:
        n, wt, data = f.field_number, f.wire_type, f.data
        out += tag(n, wt)
        if wt == 0:
            out += varint(data)
        elif wt == 1:
            out += (data & _U64).to_bytes(8, "little")
        elif wt == 5:
            out += (data & 0xFFFFFFFF).to_bytes(4, "little")
        elif wt == 2:
            out += varint(len(data)) + bytes(data)
        elif wt == 3:
            _encode_unknown(out, data)
            out += tag(n, 4)
        else:  # pragma: no cover - protobuf exposes no other wire types
            raise ValueError(f"unknown wire type {wt} for field {n}")


def unknown_bytes(msg: Message) -> bytes:
    """The unknown fields of ``msg`` (not of its sub-messages), encoded as they were read."""
    if UnknownFieldSet is None:
        return b""
    fields = UnknownFieldSet(msg)
    if not len(fields):
        return b""
    out = bytearray()
    _encode_unknown(out, fields)
    return bytes(out)


def build_trie(substitutions: dict[tuple[tuple[str, int | None], ...], bytes]) -> Trie:
    """Turn ``{path: serialized replacement}`` into the trie :func:`encode_with` walks."""
    root: Trie = {}
    for path, data in substitutions.items():
        node = root
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ValueError(f"substitution path {path} passes through a replaced message")
        node[path[-1]] = data
    return root


def encode_with(msg: Message, trie: Trie) -> bytes:
    """Serialize ``msg`` with the messages named in ``trie`` replaced by the given bytes."""
    if not trie:
        return msg.SerializeToString()
    skeleton = type(msg)()
    fields_in_trie = {key[0] for key in trie}
    parts: list[bytes] = []
    for fd, value in msg.ListFields():
        if fd.type not in _MESSAGE_TYPES:
            if fd.is_repeated:
                getattr(skeleton, fd.name).extend(value)
            else:
                setattr(skeleton, fd.name, value)
            continue
        prefix = tag(fd.number, 2)
        if fd.is_repeated:
            if fd.name not in fields_in_trie:
                for item in value:
                    data = item.SerializeToString()
                    parts += (prefix, varint(len(data)), data)
                continue
            for i, item in enumerate(value):
                data = _item_bytes(item, trie.get((fd.name, i)))
                parts += (prefix, varint(len(data)), data)
        else:
            data = _item_bytes(value, trie.get((fd.name, None)))
            parts += (prefix, varint(len(data)), data)
    return skeleton.SerializeToString() + unknown_bytes(msg) + b"".join(parts)


def _item_bytes(item: Message, sub: Any) -> bytes:
    if sub is None:
        return item.SerializeToString()
    if isinstance(sub, (bytes, bytearray)):
        return bytes(sub)
    return encode_with(item, sub)
