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
from collections.abc import Mapping
from typing import Literal

import onnx
from onnx import TensorProto

from editor.errors import SaveError, StudioError
from editor.io import atomic
from editor.io.encode import build_trie, encode_with, unknown_bytes
from editor.io.external import ExternalDataStore, split_location
from editor.io.names import RawName, restore_substitutions
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
    source: str | os.PathLike | None = None,
    raw_names: list[RawName] | None = None,
) -> None:
    """Write ``model`` to ``path`` atomically; see the module docstring for the modes.

    ``serialized``: the model's binary serialization when the caller already has it (an
    unchanged document re-reads its file instead of serializing); used by "preserve" saves.
    ``source``: the model file the document was read from; no data file of the save may be
    that file (nor may the model file be a data file ``store`` reads).
    ``raw_names``: names the loader repaired (not UTF-8 in the file); written back as they
    were read wherever nobody edited them (see :mod:`editor.io.names`).
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
    guard = _Guard(target, store, source)
    try:
        guard.check_model(target)
        sites = list(iter_tensors(model))
        if any(uses_external_data(s.tensor) for s in sites):
            if store is None:
                raise SaveError(f"cannot save '{target}': the model has external tensors but no data store was given")
            store.pin()  # before anything is written: keep reading what we opened
        names = restore_substitutions(model, raw_names) if raw_names and fmt == "binary" else {}
        if fmt == "text":
            _save_text(model, target, sites, store)
        else:
            _save_binary(model, target, sites, store, options, serialized, guard, names)
        guard.saved = True
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
    finally:
        guard.finish()


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
    serialized: bytes | None,
    guard: _Guard,
    names: dict,
) -> None:
    mode = options.external
    if mode == "preserve":
        data = serialized if serialized is not None else _serialize_if_fits(model, sites)
        if data is not None and names and serialized is None:
            data = encode_with(model, build_trie(names))
        if data is not None:
            with atomic.Transaction() as tx:
                moved = _copy_data_files(tx, target.parent, sites, store, guard)
                if not tx.files:
                    tx.open(target).write(data)
                    tx.commit()
                    return

                def render(renamed: Mapping[Path, str]) -> bytes:
                    if not renamed:
                        return data
                    subs = {
                        s.path: _relocated_tensor_bytes(s.tensor, renamed[dest])
                        for s, dest in moved if dest in renamed
                    }
                    return encode_with(model, build_trie(_with_names(subs, names)))

                tx.commit_model(target, render)
            return
        # NOTE: too big for one protobuf: always write external data, whatever was asked.
        options = SaveOptions(
            format="binary", external="single-file", location=None,
            size_threshold=options.size_threshold, convert_attributes=True,
        )
        mode = "single-file"
    if mode == "inline":
        _save_inline(model, target, sites, store, names)
    else:
        _save_single_file(model, target, sites, store, options, guard, names)


def _with_names(tensor_subs: dict, names: dict) -> dict:
    """Tensor substitutions plus the restored-name ones that do not overlap any of them
    (where they do, the repaired text is saved: a rare corner, see editor.io.names)."""
    if not names:
        return tensor_subs
    out = dict(tensor_subs)
    for path, data in names.items():
        n = len(path)
        if any(p[:n] == path or path[: len(p)] == p for p in tensor_subs):
            continue
        out[path] = data
    return out


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
    tx: atomic.Transaction, folder: Path, sites: list[TensorSite], store: ExternalDataStore | None, guard: _Guard
) -> list[tuple[TensorSite, Path]]:
    """Preserve mode: make every referenced data file exist beside the saved model.

    Returns each external tensor with the data file it names, for renaming in the model.
    """
    # NOTE: every reference was validated when the model was opened, and the files are
    # copied whole, so one reference per distinct file decides whether it is copied.
    named: list[tuple[TensorSite, Path]] = []
    done: set[tuple[str, ...]] = set()
    for s in sites:
        t = s.tensor
        if not uses_external_data(t):
            continue
        assert store is not None
        ref = store.ref(t)
        key = split_location(ref.location)
        dest = _data_destination(folder, ref.location, guard)
        named.append((s, dest))
        if key in done:
            continue
        done.add(key)
        guard.names(dest)
        ident = store.identity(ref.path)
        assert ident is not None
        try:
            st = os.lstat(dest)
            same = stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino, st.st_size) == (ident.dev, ident.ino, ident.size)
        except FileNotFoundError:
            same = False
        if same:
            continue  # the very file we read: leave it alone
        guard.check_data(dest)
        out = tx.open_data(dest)
        for offset in range(0, ident.size, _COPY_CHUNK):
            out.write(store.read_range(ref.path, offset, min(_COPY_CHUNK, ident.size - offset)))
    return named


def _data_destination(folder: Path, location: str, guard: _Guard) -> Path:
    """Where a data file named ``location`` goes; creates sub-folders, refuses symlinks."""
    parts = split_location(location)
    current = folder
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise SaveError(f"cannot write external data through symlinked folder '{current}'")
        if not current.is_dir():
            current.mkdir()
            guard.made_dirs.append(current)
    dest = current / parts[-1]
    if dest.is_dir():
        raise SaveError(f"cannot write external data to '{dest}': it is a folder")
    return dest


def _relocated_tensor_bytes(tensor: TensorProto, file_name: str) -> bytes:
    """``tensor`` (external, so small) with its location's file name replaced."""
    out = TensorProto()
    out.CopyFrom(tensor)  # keeps unknown fields
    for e in out.external_data:
        if e.key == "location":
            parts = split_location(e.value)
            e.value = "/".join((*parts[:-1], file_name))
    return out.SerializeToString()


class _Guard:
    """One save's safety rails: what it must not overwrite, the folders it made (removed
    again if it fails), and the files it names (kept when leftovers are cleaned after it)."""

    def __init__(self, target: Path, store: ExternalDataStore | None, source: str | os.PathLike | None) -> None:
        self.target = target
        self.store = store
        self.source = Path(source) if source is not None else None
        self.source_id = _identity(self.source) if self.source is not None else None
        self.reads: dict[tuple[int, int], Path] = {}
        if store is not None:
            for p in store.files():
                ident = store.identity(p)
                if ident is not None:
                    self.reads[(ident.dev, ident.ino)] = p
        self.made_dirs: list[Path] = []
        self.named: set[Path] = {target}
        self.saved = False

    def names(self, dest: Path) -> None:
        self.named.add(dest)

    def check_model(self, target: Path) -> None:
        reads = self.reads.get(_identity(target))  # type: ignore[arg-type]
        if reads is not None:
            same = "" if reads == target else f" ('{target}' is another name of it)"
            raise SaveError(
                f"cannot save '{target}': it is '{reads}', an external data file this model reads its "
                f"weights from{same}; choose another file name"
            )

    def check_data(self, dest: Path) -> None:
        if dest == self.target:
            raise SaveError(f"external data file '{dest}' is the model file itself")
        ident = _identity(dest)
        if ident is None:
            return
        if ident == self.source_id:
            raise SaveError(
                f"cannot write external data to '{dest}': it is the model file '{self.source}' being saved"
            )
        if ident == _identity(self.target):
            raise SaveError(f"cannot write external data to '{dest}': it is the model file '{self.target}'")
        reads = self.reads.get(ident)
        if reads is not None and reads != dest:
            raise SaveError(
                f"cannot write external data to '{dest}': it is another name of '{reads}', "
                "an external data file this model reads"
            )

    def finish(self) -> None:
        if not self.saved:
            for folder in reversed(self.made_dirs):
                try:
                    folder.rmdir()  # only if empty: never removes anything else
                except OSError:
                    pass
            return
        # NOTE: leftovers of interrupted saves of these same files go now: our commit made
        # every one of them unnamed. Cleaning must never fail a save that succeeded.
        folders: dict[Path, set[str]] = {}
        for p in self.named:
            folders.setdefault(p.parent, set()).add(p.name)
        stale_reads = []
        if self.store is not None:  # a document opened while a save was half done
            stale_reads = [p for p in self.store.files() if atomic.leftover_target(p.name) and p.parent in folders]
        try:
            for folder, names in folders.items():
                atomic.clean_leftovers(folder, names, keep=self.named)
            for p in stale_reads:
                if p not in self.named:
                    p.unlink(missing_ok=True)
        except OSError:
            pass


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, following symlinks; None if there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


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


def _save_inline(model: onnx.ModelProto, target: Path, sites: list[TensorSite], store: ExternalDataStore | None,
                 names: dict) -> None:
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
    data = encode_with(model, build_trie(_with_names(subs, names)))
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
    guard: _Guard,
    names: dict,
) -> None:
    location = options.location or f"{target.stem}.onnx.data"
    dest = _data_destination(target.parent, location, guard)
    guard.check_data(dest)
    inline: dict = {}
    moved: list[tuple[TensorSite, int, int]] = []  # tensor, offset, length in the data file
    with atomic.Transaction() as tx:
        out = tx.open_data(dest)
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
                moved.append((s, offset, len(payload)))
                del payload
            elif external:  # below the threshold: bring it inline
                inline[s.path] = _inline_tensor_bytes(t, _payload(t, store))

        def render(renamed: Mapping[Path, str]) -> bytes:
            loc = location
            if dest in renamed:
                loc = "/".join((*split_location(location)[:-1], renamed[dest]))
            subs = dict(inline)
            for s, offset, length in moved:
                subs[s.path] = _external_tensor_bytes(s.tensor, loc, offset, length)
            data = encode_with(model, build_trie(_with_names(subs, names)))
            if len(data) > PROTOBUF_LIMIT:
                raise SaveError(
                    f"cannot save '{target}': {len(data)} bytes remain in the model after moving tensors "
                    f"of {options.size_threshold}+ bytes out, over protobuf's 2 GB limit"
                )
            return data

        if not moved:
            tx.drop(out)  # nothing qualified: write no empty data file
            tx.open(target).write(render({}))
            tx.commit()
            return
        guard.names(dest)
        final = render({})  # the size check, before anything is renamed
        tx.commit_model(target, lambda renamed: render(renamed) if renamed else final)


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
