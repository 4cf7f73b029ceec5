"""Saving models: binary or text, external data preserved, inlined or gathered in one file.

Every save is atomic (see :mod:`editor.io.atomic`): the old files stay exactly as they were
unless the whole save succeeds, and failures raise :class:`~editor.errors.SaveError`.

External data modes (``SaveOptions.external``):

* ``"preserve"`` — inline tensors stay inline, external ones keep their location/offset/length
  entries, so an unchanged model saves to the very bytes it was read from. Data files are
  copied verbatim (atomically) when the model goes to another folder, or when the file at the
  target path is no longer the one the store read (e.g. an earlier save replaced it).
* ``"inline"`` — every tensor's bytes go into the model (refused past protobuf's 2 GB).
* ``"single-file"`` — tensors of at least ``size_threshold`` bytes go into one new data file,
  each at a 4096-aligned offset; smaller ones go inline.

A binary model whose serialized size would pass 2 GB is always written as ``single-file``.

NOTE: the caller's ModelProto is never modified, not even temporarily: swapped tensors are
encoded around the model by :func:`editor.io.encode.encode_with`. Before anything is written,
``store.pin()`` maps every data file the model reads from, so writing new data over the same
paths (temporary file + rename) cannot change what the open document reads.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import onnx
from onnx import TensorProto

from editor.errors import SaveError, StudioError
from editor.io import atomic
from editor.io.encode import build_trie, encode_with, unknown_bytes
from editor.io.external import ExternalDataStore, split_location
from editor.io.tensors import (
    PAYLOAD_FIELDS,
    TensorSite,
    iter_tensors,
    numpy_to_tensor,
    tensor_nbytes,
    tensor_to_numpy,
    uses_external_data,
)
from editor.io.text import TEXT_SUFFIXES, serialize_model_text

#: Largest protobuf message (2 GB - 1). Module-level so tests can lower it.
PROTOBUF_LIMIT = 2**31 - 1
#: Offsets of tensors in a data file we write are multiples of this (page size; mmap-friendly).
ALIGNMENT = 4096
_COPY_CHUNK = 64 << 20


@dataclass(frozen=True)
class SaveOptions:
    format: Literal["auto", "binary", "text"] = "auto"  # auto: by extension (.onnxtxt/.txt => text)
    external: Literal["preserve", "inline", "single-file"] = "preserve"
    location: str | None = None  # single-file: data file relative to the model's folder
    size_threshold: int = 1024  # single-file: tensors with at least this many bytes go external
    #: single-file: also move big tensors held in node attributes (``Constant``), not only
    #: initializers; forced on when a model is too big for one protobuf.
    convert_attributes: bool = False


def save_model(
    model: onnx.ModelProto,
    path: str | os.PathLike,
    *,
    store: ExternalDataStore | None = None,
    options: SaveOptions = SaveOptions(),
    serialized: bytes | None = None,
) -> None:
    """Write ``model`` to ``path`` atomically; see the module docstring for the modes.

    ``serialized``: the model's binary serialization when the caller already has it (an
    unchanged document re-reads its file instead of serializing); used by "preserve" saves.
    """
    target = Path(path)
    _check_options(options)
    folder = target.parent
    if not folder.is_dir():
        raise SaveError(f"cannot save '{target}': folder '{folder}' does not exist")
    if target.is_dir():
        raise SaveError(f"cannot save '{target}': it is a folder")
    target = folder.resolve() / target.name
    fmt = options.format
    if fmt == "auto":
        fmt = "text" if target.suffix.lower() in TEXT_SUFFIXES else "binary"
    try:
        sites = list(iter_tensors(model))
        if any(uses_external_data(s.tensor) for s in sites):
            if store is None:
                raise SaveError(f"cannot save '{target}': the model has external tensors but no data store was given")
            store.pin()  # before anything is written: keep reading what we opened
        if fmt == "text":
            _save_text(model, target, sites, store)
        else:
            _save_binary(model, target, sites, store, options, serialized)
    except SaveError:
        raise
    except StudioError as exc:
        raise SaveError(f"cannot save '{target}': {exc.message}") from exc
    except OSError as exc:
        where = exc.filename or target
        raise SaveError(f"cannot save '{target}': {exc.strerror or exc} ('{where}')") from exc
    except MemoryError:
        raise SaveError(f"cannot save '{target}': out of memory") from None
    except Exception as exc:  # noqa: BLE001 - the promise is SaveError and nothing else
        raise SaveError(f"cannot save '{target}': {type(exc).__name__}: {exc}") from exc


def _check_options(options: SaveOptions) -> None:
    if options.format not in ("auto", "binary", "text"):
        raise SaveError(f"unknown save format {options.format!r}")
    if options.external not in ("preserve", "inline", "single-file"):
        raise SaveError(f"unknown external data mode {options.external!r}")
    if options.size_threshold < 0:
        raise SaveError(f"size_threshold {options.size_threshold} is negative")


# ----------------------------------------------------------------------------- binary


def _inline_estimate(sites: list[TensorSite]) -> int:
    """Payload bytes the model holds inline, from dims alone (reads nothing)."""
    return sum(tensor_nbytes(s.tensor) for s in sites if not uses_external_data(s.tensor))


def _save_binary(
    model: onnx.ModelProto,
    target: Path,
    sites: list[TensorSite],
    store: ExternalDataStore | None,
    options: SaveOptions,
    serialized: bytes | None = None,
) -> None:
    mode = options.external
    if mode == "preserve":
        data = serialized if serialized is not None else _serialize_if_fits(model, sites)
        if data is not None:
            with atomic.Transaction() as tx:
                _copy_data_files(tx, target.parent, sites, store)
                tx.open(target).write(data)
                tx.commit()
            return
        # NOTE: too big for one protobuf: always write external data, whatever was asked.
        options = SaveOptions(
            format="binary", external="single-file", location=None,
            size_threshold=options.size_threshold, convert_attributes=True,
        )
        mode = "single-file"
    if mode == "inline":
        _save_inline(model, target, sites, store)
    else:
        _save_single_file(model, target, sites, store, options)


def _serialize_if_fits(model: onnx.ModelProto, sites: list[TensorSite]) -> bytes | None:
    """``model.SerializeToString()``, or None when it would pass :data:`PROTOBUF_LIMIT`.

    NOTE: upb's ``ByteSize()`` serializes the whole message to measure it, so calling it on
    every save would double the cost of saving. The inline payload from dims is a cheap lower
    bound; ``ByteSize()`` is asked only when that bound comes within half of the limit, and the
    serialized length is checked again afterwards (node-heavy graphs with few weights).
    """
    estimate = _inline_estimate(sites)
    if estimate > PROTOBUF_LIMIT:
        return None
    if estimate > PROTOBUF_LIMIT // 2 and model.ByteSize() > PROTOBUF_LIMIT:
        return None
    try:
        data = model.SerializeToString()
    except (ValueError, RuntimeError, OverflowError):  # upb refuses messages past 2 GB
        return None
    return data if len(data) <= PROTOBUF_LIMIT else None


def _copy_data_files(
    tx: atomic.Transaction, folder: Path, sites: list[TensorSite], store: ExternalDataStore | None
) -> None:
    """Preserve mode: make every referenced data file exist beside the saved model."""
    # NOTE: one reference per distinct location is enough: every reference was validated when
    # the model was opened, and the files are copied whole.
    first: dict[str, TensorProto] = {}
    for s in sites:
        t = s.tensor
        if uses_external_data(t):
            for e in t.external_data:
                if e.key == "location":
                    first.setdefault(e.value, t)
    seen: set[tuple[str, ...]] = set()
    for t in first.values():
        assert store is not None
        ref = store.ref(t)
        key = split_location(ref.location)
        if key in seen:
            continue
        seen.add(key)
        dest = _data_destination(folder, ref.location)
        ident = store.identity(ref.path)
        assert ident is not None
        try:
            st = os.lstat(dest)
            same = stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino, st.st_size) == (ident.dev, ident.ino, ident.size)
        except FileNotFoundError:
            same = False
        if same:
            continue  # the very file we read: leave it alone
        out = tx.open(dest)
        for offset in range(0, ident.size, _COPY_CHUNK):
            out.write(store.read_range(ref.path, offset, min(_COPY_CHUNK, ident.size - offset)))


def _data_destination(folder: Path, location: str) -> Path:
    """Where a data file named ``location`` goes; creates sub-folders, refuses symlinks."""
    parts = split_location(location)
    current = folder
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise SaveError(f"cannot write external data through symlinked folder '{current}'")
        current.mkdir(exist_ok=True)
    dest = current / parts[-1]
    if dest.is_dir():
        raise SaveError(f"cannot write external data to '{dest}': it is a folder")
    return dest


def _tensor_skeleton(tensor: TensorProto) -> TensorProto:
    """A copy of ``tensor`` without its payload fields (copies no data bytes)."""
    out = TensorProto()
    for fd, value in tensor.ListFields():
        if fd.name in PAYLOAD_FIELDS:
            continue
        if fd.is_repeated:
            getattr(out, fd.name).extend(value)
        elif fd.type == fd.TYPE_MESSAGE:
            getattr(out, fd.name).CopyFrom(value)
        else:
            setattr(out, fd.name, value)
    return out


def _payload(tensor: TensorProto, store: ExternalDataStore | None) -> bytes | memoryview:
    if uses_external_data(tensor):
        assert store is not None
        return store.read_bytes(tensor)
    return tensor.raw_data


def _typed_payload(tensor: TensorProto) -> bytes:
    """The raw (little-endian, packed) bytes of a tensor whose values sit in typed fields."""
    array = tensor_to_numpy(tensor, None)
    return numpy_to_tensor(array, tensor.name, elem_type=tensor.data_type).raw_data


def _inline_tensor_bytes(tensor: TensorProto, payload: bytes | memoryview) -> bytes:
    out = _tensor_skeleton(tensor)
    out.raw_data = bytes(payload)
    return out.SerializeToString() + unknown_bytes(tensor)


def _external_tensor_bytes(tensor: TensorProto, location: str, offset: int, length: int) -> bytes:
    out = _tensor_skeleton(tensor)
    out.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = out.external_data.add()
        entry.key = key
        entry.value = value
    return out.SerializeToString() + unknown_bytes(tensor)


def _save_inline(model: onnx.ModelProto, target: Path, sites: list[TensorSite], store: ExternalDataStore | None) -> None:
    external = [s for s in sites if uses_external_data(s.tensor)]
    if external:
        assert store is not None
        estimate = _inline_estimate(sites) + sum(store.ref(s.tensor).length for s in external)
        if estimate > PROTOBUF_LIMIT:
            raise SaveError(
                f"cannot save '{target}' with all data inline: {estimate} bytes of tensors exceed "
                f"protobuf's 2 GB limit ({PROTOBUF_LIMIT}); save with external data"
            )
    subs = {s.path: _inline_tensor_bytes(s.tensor, _payload(s.tensor, store)) for s in external}
    data = encode_with(model, build_trie(subs))
    if len(data) > PROTOBUF_LIMIT:
        raise SaveError(
            f"cannot save '{target}' with all data inline: {len(data)} bytes exceed protobuf's 2 GB limit"
        )
    with atomic.Transaction() as tx:
        tx.open(target).write(data)
        tx.commit()


def _save_single_file(
    model: onnx.ModelProto,
    target: Path,
    sites: list[TensorSite],
    store: ExternalDataStore | None,
    options: SaveOptions,
) -> None:
    location = options.location or f"{target.stem}.onnx.data"
    dest = _data_destination(target.parent, location)
    if dest == target:
        raise SaveError(f"external data location {location!r} is the model file itself")
    subs: dict = {}
    moved = 0
    with atomic.Transaction() as tx:
        out = tx.open(dest)
        for s in sites:
            t = s.tensor
            external = uses_external_data(t)
            # values in typed fields (float_data, int32_data ... as text-syntax models and
            # onnx.helper.make_tensor write them) move too, re-encoded in the raw layout
            typed = not external and not t.HasField("raw_data") and t.data_type != TensorProto.STRING
            movable = external or (t.HasField("raw_data") and t.data_type != TensorProto.STRING) or typed
            wanted = s.role == "initializer" or external or options.convert_attributes
            if movable and wanted and tensor_nbytes(t) >= options.size_threshold:
                payload = _typed_payload(t) if typed else _payload(t, store)
                offset = -(-out.size // ALIGNMENT) * ALIGNMENT
                out.pad_to(offset)
                out.write(payload)
                subs[s.path] = _external_tensor_bytes(t, location, offset, len(payload))
                moved += 1
                del payload
            elif external:  # below the threshold: bring it inline
                subs[s.path] = _inline_tensor_bytes(t, _payload(t, store))
        if not moved:
            tx.drop(out)  # nothing qualified: write no empty data file
        data = encode_with(model, build_trie(subs))
        if len(data) > PROTOBUF_LIMIT:
            raise SaveError(
                f"cannot save '{target}': {len(data)} bytes remain in the model after moving tensors "
                f"of {options.size_threshold}+ bytes out, over protobuf's 2 GB limit"
            )
        tx.open(target).write(data)
        tx.commit()


# ----------------------------------------------------------------------------- text


def _save_text(model: onnx.ModelProto, target: Path, sites: list[TensorSite], store: ExternalDataStore | None) -> None:
    external = [s for s in sites if uses_external_data(s.tensor)]
    if external:
        # The text syntax has no external data: print a parsed copy with the data inline.
        subs = {s.path: _inline_tensor_bytes(s.tensor, _payload(s.tensor, store)) for s in external}
        printable = onnx.ModelProto()
        printable.ParseFromString(encode_with(model, build_trie(subs)))
    else:
        printable = model
    text = serialize_model_text(printable).encode("utf-8")
    with atomic.Transaction() as tx:
        tx.open(target).write(text)
        tx.commit()
