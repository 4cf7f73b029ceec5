"""External tensor data: validated at open with ``stat`` only, read lazily through mmap.

An ONNX tensor stored outside the model file names a ``location`` (a path relative to the
model's folder, or to a folder the user names), an ``offset`` and a ``length``. Those are
untrusted input, so every reference is checked when the model is opened, before anything is
read: the location must stay inside the data folder (no ``..``, no absolute path, no symlink
in any component, no hard-linked file) and the file must be long enough for
``offset + length`` bytes, with ``length`` equal to what the tensor's dims and element type
need. Nothing is read at open; :meth:`ExternalDataStore.read_bytes` maps a file the first
time one of its tensors is needed and hands out a memoryview slice of the map.

NOTE: the identity (device, inode, size) of each file is recorded at validation time and
checked again when the file is mapped, so a file swapped behind our back is reported instead
of silently read. :meth:`ExternalDataStore.pin` maps every file up front; a later save that
replaces those paths (temporary file + rename) then leaves the old inodes alive under our
maps on POSIX, so what the open document reads never changes underneath it.
"""

from __future__ import annotations

import mmap
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from onnx import TensorProto

from editor.errors import ExternalDataError, LoadError
from editor.io.tensors import dtype_name, element_count, raw_nbytes, uses_external_data

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True, slots=True)
class FileIdentity:
    dev: int
    ino: int
    size: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size)


@dataclass(frozen=True, slots=True)
class ExternalRef:
    """One validated external reference of a tensor."""

    location: str
    path: Path
    offset: int
    length: int


def split_location(location: str, tensor_name: str = "") -> tuple[str, ...]:
    """The components of a relative ``location``; raises on absolute paths and ``..``."""
    who = f" of tensor {tensor_name!r}" if tensor_name else ""
    if not location:
        raise ExternalDataError(f"external data location{who} is empty")
    if "\x00" in location:
        raise ExternalDataError(f"external data location {location!r}{who} contains a NUL byte")
    bad = next((c for c in location if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0), None)
    if bad is not None:
        # a newline or escape in a file name breaks every listing and script that shows it
        raise ExternalDataError(f"external data location {location!r}{who} contains a control character ({bad!r})")
    if location.startswith(("/", "\\")) or (len(location) > 1 and location[1] == ":") or os.path.isabs(location):
        raise ExternalDataError(f"external data location {location!r}{who} is an absolute path")
    parts = [p for p in location.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ExternalDataError(f"external data location {location!r}{who} leaves the data folder through '..'")
    if not parts:
        raise ExternalDataError(f"external data location {location!r}{who} names no file")
    return tuple(parts)


def check_inside(base_dir: Path, parts: tuple[str, ...], location: str) -> os.stat_result:
    """``lstat`` every component below ``base_dir``; refuse symlinks, non-files, hard links."""
    current = base_dir
    for k, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            raise ExternalDataError(f"external data file '{base_dir / location}' does not exist") from None
        except OSError as exc:
            raise ExternalDataError(f"cannot stat external data file '{current}': {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise ExternalDataError(f"external data location {location!r} goes through a symlink: '{current}'")
        last = k == len(parts) - 1
        if not last and not stat.S_ISDIR(st.st_mode):
            raise ExternalDataError(f"external data location {location!r}: '{current}' is not a folder")
    if not stat.S_ISREG(st.st_mode):
        raise ExternalDataError(f"external data location {location!r}: '{current}' is not a regular file")
    if st.st_nlink > 1:
        raise ExternalDataError(
            f"external data file '{current}' has {st.st_nlink} hard links; refusing a file shared with other paths"
        )
    return st


class ExternalDataStore:
    """Resolves the external tensors of one model against ``base_dir``; lazy, mmap-backed.

    Use as a context manager or call :meth:`close`. Arrays and memoryviews handed out stay
    valid after ``close()``: a map with live views is left to the garbage collector.
    """

    def __init__(self, base_dir: str | os.PathLike | None) -> None:
        self.base_dir: Path | None = Path(base_dir).resolve() if base_dir is not None else None
        self._stats: dict[tuple[str, ...], tuple[Path, FileIdentity]] = {}
        self._maps: dict[Path, mmap.mmap | None] = {}
        self._lock = threading.Lock()
        self._closed = False

    # -------------------------------------------------------------- validation (stat only)

    def _stat(self, parts: tuple[str, ...], location: str) -> tuple[Path, FileIdentity]:
        found = self._stats.get(parts)
        if found is None:
            if self.base_dir is None:
                raise ExternalDataError(
                    f"external data location {location!r} cannot be resolved: the model has no folder"
                )
            st = check_inside(self.base_dir, parts, location)
            found = (self.base_dir.joinpath(*parts), FileIdentity.of(st))
            self._stats[parts] = found
        return found

    def ref(self, tensor: TensorProto) -> ExternalRef:
        """Validate the external reference of ``tensor`` (stat only) and return it."""
        name = tensor.name
        entries: dict[str, str] = {}
        for e in tensor.external_data:
            entries[e.key] = e.value
        location = entries.get("location")
        if location is None:
            raise ExternalDataError(f"tensor {name!r} is marked external but has no 'location' entry")
        parts = split_location(location, name)
        offset = _parse_int(entries.get("offset", "0"), "offset", name)
        if tensor.data_type == TensorProto.STRING:
            raise ExternalDataError(f"tensor {name!r}: string tensors cannot use external data")
        try:
            need = raw_nbytes(tensor.data_type, element_count(tensor.dims, name))
        except LoadError as exc:
            raise ExternalDataError(exc.message) from None
        length = _parse_int(entries["length"], "length", name) if "length" in entries else need
        if length != need:
            raise ExternalDataError(
                f"tensor {name!r}: external length {length} does not match dims {list(tensor.dims)} "
                f"of {dtype_name(tensor.data_type)} ({need} bytes)"
            )
        path, ident = self._stat(parts, location)
        if offset + length > ident.size:
            raise ExternalDataError(
                f"tensor {name!r}: external data '{path}' is too short: needs bytes {offset}..{offset + length}"
                f" but the file has {ident.size}"
            )
        return ExternalRef(location, path, offset, length)

    # -------------------------------------------------------------- reading (mmap)

    def files(self) -> list[Path]:
        """Distinct external data files referenced so far (all of them once the model is loaded)."""
        return sorted({p for p, _ in self._stats.values()})

    def identity(self, path: Path) -> FileIdentity | None:
        """The (dev, inode, size) recorded for ``path`` when it was validated."""
        for p, ident in self._stats.values():
            if p == path:
                return ident
        return None

    def is_mapped(self, path: Path) -> bool:
        return path in self._maps

    @property
    def mapped_files(self) -> list[Path]:
        return sorted(self._maps)

    def _map(self, path: Path, ident: FileIdentity) -> mmap.mmap | None:
        with self._lock:
            if path in self._maps:
                return self._maps[path]
            if self._closed:
                raise ExternalDataError(f"external data store for '{self.base_dir}' is closed")
            try:
                fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_BINARY)
            except OSError as exc:
                raise ExternalDataError(f"cannot open external data file '{path}': {exc.strerror}") from None
            try:
                now = FileIdentity.of(os.fstat(fd))
                if now != ident:
                    raise ExternalDataError(
                        f"external data file '{path}' changed since the model was opened "
                        f"(size {ident.size} -> {now.size}); reopen the model"
                    )
                mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if ident.size else None
            finally:
                os.close(fd)  # the map keeps its own reference to the file
            self._maps[path] = mm
            return mm

    def read_bytes(self, tensor: TensorProto) -> memoryview:
        """The external payload of ``tensor``: a read-only memoryview slice of the file's map."""
        if not uses_external_data(tensor):
            raise ExternalDataError(f"tensor {tensor.name!r} does not use external data")
        ref = self.ref(tensor)
        parts = split_location(ref.location)
        mm = self._map(ref.path, self._stats[parts][1])
        if ref.length == 0 or mm is None:
            return memoryview(b"")
        return memoryview(mm)[ref.offset : ref.offset + ref.length]

    def read_range(self, path: Path, offset: int, length: int) -> memoryview:
        """Bytes ``offset .. offset+length`` of a validated data file (used to copy files verbatim)."""
        ident = self.identity(path)
        if ident is None:
            raise ExternalDataError(f"'{path}' is not an external data file of this model")
        mm = self._map(path, ident)
        if mm is None or length == 0:
            return memoryview(b"")
        return memoryview(mm)[offset : offset + length]

    def pin(self) -> None:
        """Map every referenced file now, so later replacement of those paths cannot change our reads."""
        for path, ident in list(self._stats.values()):
            self._map(path, ident)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            maps, self._maps = self._maps, {}
        for mm in maps.values():
            if mm is None:
                continue
            try:
                mm.close()
            except BufferError:
                # NOTE: numpy arrays / memoryviews over this map are still alive; the map is
                # unmapped by the garbage collector once the last of them goes.
                pass

    def __enter__(self) -> ExternalDataStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ExternalDataStore(base_dir={str(self.base_dir)!r}, files={len(self._stats)}, mapped={len(self._maps)})"


def _parse_int(text: str, what: str, tensor_name: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ExternalDataError(f"tensor {tensor_name!r}: external {what} {text!r} is not a non-negative integer")
    value = int(text)
    if value >= 1 << 63:
        raise ExternalDataError(f"tensor {tensor_name!r}: external {what} {value} is absurd")
    return value
