"""Names that are not valid UTF-8: shown with replacement characters, saved as they were.

ONNX requires UTF-8 in every string field, but files in the wild break the rule. protobuf
(proto2) parses such a field as ``bytes`` instead of ``str``, and every consumer of names —
canvas, panels, find, diff, SVG, ``check``, ``info`` — then fails on a type it never
expected (a window that never finished opening, ``render`` ending in a TypeError).

NOTE: so the loader repairs the model once (:func:`repair_names`): each such field gets
its text decoded with U+FFFD for the bad bytes, which is what every view shows, and a
:class:`RawName` remembers the original bytes. :func:`restore_substitutions` gives a save
the serialized bytes of each affected node / value info / initializer with the original
bytes back in every field whose text nobody edited, so an unchanged save gives back the
file's bytes. Names outside those (the graph's name, metadata) are saved repaired.

The walk reads only string and message fields (never ``raw_data``), so it costs little
even on models with gigabytes of weights.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

import onnx

from editor.io.encode import varint

__all__ = ["RawName", "repair_names", "restore_substitutions"]

Path_ = tuple[tuple[str, "int | None"], ...]

_STRING = FieldDescriptor.TYPE_STRING
_MESSAGE = FieldDescriptor.TYPE_MESSAGE
_fields_cache: dict[str, tuple[list[FieldDescriptor], list[FieldDescriptor]]] = {}


def _fields(desc: Descriptor) -> tuple[list[FieldDescriptor], list[FieldDescriptor]]:
    found = _fields_cache.get(desc.full_name)
    if found is None:
        strings = [f for f in desc.fields if f.type == _STRING]
        messages = [f for f in desc.fields if f.type == _MESSAGE]
        found = _fields_cache[desc.full_name] = (strings, messages)
    return found


def _is_repeated(fd: FieldDescriptor) -> bool:
    return fd.is_repeated


@dataclass
class RawName:
    """One string field that held bytes that are not UTF-8."""

    raw: bytes
    text: str  # what the model holds now: ``raw`` decoded with U+FFFD
    owner: Message  # the message whose field it is
    field: str
    index: int | None  # position in a repeated field
    #: the node / value info / tensor of a graph list that contains it (None: not restorable)
    anchor: Message | None = None
    #: the path from ``anchor`` down to ``owner``
    inner: Path_ = field(default=())
    #: where it was found, for messages: "node 3 (Concat) of graph 'main'", "graph name" ...
    where: str = ""


_ANCHOR_LISTS = ("node", "input", "output", "value_info", "initializer")


class _KnownClean(Exception):
    """Raised inside the check when ``known_clean()`` says the walk is not needed."""


#: how many messages of one list the check reads between two calls of ``known_clean``
_ASK_EVERY = 256


def repair_names(model: onnx.ModelProto, known_clean: Callable[[], bool] | None = None) -> list[RawName]:
    """Replace every non-UTF-8 string field of ``model`` by its repaired text (in place).

    ``known_clean`` is asked before the walk and now and then during it; once it answers
    True (every string field is known to be UTF-8: the start-up's probe, see
    :mod:`editor.io.utf8_probe`) there is nothing to repair and the walk stops."""
    found: list[RawName] = []
    try:
        if known_clean is not None and known_clean():
            return found
        dirty = _has_raw(model, known_clean)
    except _KnownClean:
        return found
    if dirty:
        _walk(model, found, anchor=None, inner=(), where="model", top=True)
    return found


# NOTE: almost every model has nothing to repair, and an 11.8k-node dynamo export holds
# 178k messages (60k metadata entries, 46k shape dims), so the walk that records where each
# bad name sits (``_walk``: a call per message) cost more than parsing the file (0.59 s
# against onnx.load's 0.42, CPU). ``_has_raw`` only answers "is there any?", reading the
# bulk (nodes, their metadata, value infos and their shapes) in flat loops and every other
# message with the generic walk, so it misses nothing; the recording walk runs only when
# it says yes.
def _raw(value: Any) -> bool:
    return type(value) is bytes


def _any_raw(values) -> bool:
    for v in values:
        if type(v) is bytes:
            return True
    return False


def _entries_raw(entries) -> bool:
    for e in entries:
        if type(e.key) is bytes or type(e.value) is bytes:
            return True
    return False


def _type_raw(tp: onnx.TypeProto) -> bool:
    if _raw(tp.denotation):
        return True
    if tp.WhichOneof("value") != "tensor_type":
        return _has_raw(tp)
    t = tp.tensor_type
    for d in t.shape.dim:
        if type(d.dim_param) is bytes or type(d.denotation) is bytes:
            return True
    return False


def _node_raw(node: onnx.NodeProto) -> bool:
    for fd, value in node.ListFields():
        name = fd.name
        if name in ("input", "output"):
            if _any_raw(value):
                return True
        elif name == "metadata_props":
            if _entries_raw(value):
                return True
        elif fd.type == _STRING:
            if _raw(value) if not _is_repeated(fd) else _any_raw(value):
                return True
        elif fd.type == _MESSAGE:
            for item in (value if _is_repeated(fd) else (value,)):
                if _has_raw(item):
                    return True
    return False


def _value_info_raw(vi: onnx.ValueInfoProto) -> bool:
    for fd, value in vi.ListFields():
        if fd.name == "type":
            if _type_raw(value):
                return True
        elif fd.name == "metadata_props":
            if _entries_raw(value):
                return True
        elif fd.type == _STRING:
            if _raw(value) if not _is_repeated(fd) else _any_raw(value):
                return True
        elif fd.type == _MESSAGE:
            for item in (value if _is_repeated(fd) else (value,)):
                if _has_raw(item):
                    return True
    return False


_FAST = {"onnx.NodeProto": _node_raw, "onnx.ValueInfoProto": _value_info_raw}


def _has_raw(msg: Message, known_clean: Callable[[], bool] | None = None) -> bool:
    """True when some string field of ``msg`` or any message inside it is not UTF-8
    (``known_clean``: see :func:`repair_names`; asked in the lists of the model and its
    graphs, where the bulk is)."""
    strings, messages = _set_fields(msg)
    for fd, value in strings:
        if _raw(value) if not _is_repeated(fd) else _any_raw(value):
            return True
    read = 0
    for fd in messages:
        items = getattr(msg, fd.name)
        for item in (items if _is_repeated(fd) else (items,)):
            if known_clean is not None:
                read += 1
                if read % _ASK_EVERY == 0 and known_clean():
                    raise _KnownClean
            fast = _FAST.get(item.DESCRIPTOR.full_name)
            if fast(item) if fast is not None else _has_raw(item, known_clean):
                return True
    return False


# NOTE: speed. Most messages set few of their fields (a Dimension one of three, a NodeProto
# no doc_string), so they are read with ListFields(), which returns the set fields in one
# C call: the walk of an 11.8k-node export took longer than the parse itself when every
# declared field was read with getattr (issue 30). A TensorProto is read field by field as
# before: ListFields() would copy its raw_data.
_BY_FIELD = frozenset({"onnx.TensorProto", "onnx.SparseTensorProto"})


def _set_fields(msg: Message) -> tuple[list[tuple[FieldDescriptor, Any]], list[FieldDescriptor]]:
    """(set string fields with their values, message fields to walk) of ``msg``."""
    desc = msg.DESCRIPTOR
    if desc.full_name in _BY_FIELD:
        strings, messages = _fields(desc)
        return [(fd, getattr(msg, fd.name)) for fd in strings], [
            fd for fd in messages if _is_repeated(fd) or msg.HasField(fd.name)]
    strs, msgs = [], []
    for fd, value in msg.ListFields():
        if fd.type == _STRING:
            strs.append((fd, value))
        elif fd.type == _MESSAGE:
            msgs.append(fd)
    return strs, msgs


def _walk(msg: Message, found: list[RawName], *, anchor: Message | None, inner: Path_, where: str,
          top: bool) -> None:
    strings, messages = _set_fields(msg)
    for fd, value in strings:
        if _is_repeated(fd):
            for i, item in enumerate(value):
                if isinstance(item, bytes):
                    text = item.decode("utf-8", "replace")
                    found.append(RawName(item, text, msg, fd.name, i, anchor, inner, where))
                    value[i] = text
        elif isinstance(value, bytes):
            text = value.decode("utf-8", "replace")
            found.append(RawName(value, text, msg, fd.name, None, anchor, inner, where))
            setattr(msg, fd.name, text)
    is_list_owner = top and isinstance(msg, (onnx.GraphProto, onnx.FunctionProto))
    for fd in messages:
        if _is_repeated(fd):
            items = getattr(msg, fd.name)
            for i, item in enumerate(items):
                if is_list_owner and fd.name in _ANCHOR_LISTS:
                    label = f"{fd.name} {i}" + (f" ({item.op_type})" if fd.name == "node" else "")
                    _walk(item, found, anchor=item, inner=(), where=f"{label} of {where}", top=False)
                else:
                    sub_inner = inner + ((fd.name, i),) if anchor is not None else ()
                    _walk(item, found, anchor=anchor, inner=sub_inner, where=where,
                          top=top and isinstance(msg, onnx.ModelProto))
        else:
            sub = getattr(msg, fd.name)
            sub_inner = inner + ((fd.name, None),) if anchor is not None else ()
            label = where
            if isinstance(msg, onnx.ModelProto) and fd.name == "graph":
                label = "the main graph"
            _walk(sub, found, anchor=anchor, inner=sub_inner, where=label,
                  top=top and isinstance(msg, onnx.ModelProto))


def _anchor_paths(model: onnx.ModelProto, wanted: set[int]) -> dict[int, Path_]:
    """Where each anchor (by ``id``) sits in ``model`` now (edits may have moved it)."""
    out: dict[int, Path_] = {}
    holders: list[tuple[Path_, Any]] = []
    if model.HasField("graph"):
        holders.append(((("graph", None),), model.graph))
    for i, fn in enumerate(model.functions):
        holders.append(((("functions", i),), fn))
    for prefix, holder in holders:
        for name in _ANCHOR_LISTS:
            if not hasattr(holder, name):
                continue
            for i, item in enumerate(getattr(holder, name)):
                if id(item) in wanted:
                    out[id(item)] = prefix + ((name, i),)
    return out


def _navigate(msg: Message, path: Path_) -> Message | None:
    for name, index in path:
        try:
            msg = getattr(msg, name)[index] if index is not None else getattr(msg, name)
        except (IndexError, AttributeError):
            return None
    return msg


def restore_substitutions(model: onnx.ModelProto, raw_names: list[RawName]) -> dict[Path_, bytes]:
    """``{path: serialized message}`` for :func:`editor.io.encode.encode_with` that puts the
    original bytes back wherever the repaired text is still unedited."""
    by_anchor: dict[int, list[RawName]] = {}
    anchors: dict[int, Message] = {}
    for r in raw_names:
        if r.anchor is not None:
            by_anchor.setdefault(id(r.anchor), []).append(r)
            anchors[id(r.anchor)] = r.anchor
    paths = _anchor_paths(model, set(by_anchor))
    rng = random.Random(0)
    subs: dict[Path_, bytes] = {}
    for key, path in paths.items():
        anchor = anchors[key]
        copy = type(anchor)()
        copy.CopyFrom(anchor)
        swaps: list[tuple[bytes, bytes]] = []
        for r in by_anchor[key]:
            owner = _navigate(copy, r.inner)
            if owner is None:
                continue
            current = getattr(owner, r.field)
            value = current[r.index] if r.index is not None and r.index < len(current) else (
                None if r.index is not None else current)
            if value != r.text:
                continue  # edited since it was read: the new text is what gets saved
            number = owner.DESCRIPTOR.fields_by_name[r.field].number
            prefix = varint(number << 3 | 2) + varint(len(r.raw))
            for _ in range(20):  # a placeholder of the same length, found exactly once
                placeholder = "".join(rng.choice(string.ascii_letters) for _ in range(len(r.raw)))
                if r.index is not None:
                    current[r.index] = placeholder
                else:
                    setattr(owner, r.field, placeholder)
                needle = prefix + placeholder.encode()
                if copy.SerializeToString().count(needle) == 1:
                    swaps.append((needle, prefix + r.raw))
                    break
            else:  # pragma: no cover - 20 collisions in a row
                if r.index is not None:
                    current[r.index] = r.text
                else:
                    setattr(owner, r.field, r.text)
        if swaps:
            data = copy.SerializeToString()
            for needle, raw in swaps:
                data = data.replace(needle, raw, 1)
            subs[path] = data
    return subs
