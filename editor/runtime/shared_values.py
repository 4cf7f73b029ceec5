"""Big run results cross from the worker in nameless shared files: written once, mapped, never copied.

The worker writes each tensor of at least :data:`SPILL_MIN_BYTES` into a file that has no
name (``memfd_create`` on Linux; an ``O_TMPFILE`` file in a folder the caller names; or a
temporary file unlinked the moment it is opened where neither exists), in ``.npy`` layout
(header, then the data) when numpy can describe the dtype, and passes the open descriptor to
the parent over the run pipe (``SCM_RIGHTS``). The parent maps it copy-on-write
(:func:`adopt_values`): statistics, the Values views and ``run --save`` read that memory,
and a value's memory goes back to the system when its last array is dropped.

NOTE: clean-up is certain because nothing ever has a name. A cancelled run, a crashed or
killed worker, or a parent killed with SIGKILL leaves nothing in ``/dev/shm`` or the temp
folder: the kernel frees a nameless file when the last descriptor and mapping of it close,
and those live only in the two processes. (The unlink-at-open fallback, used where neither
``memfd_create`` nor ``O_TMPFILE`` exists, has a name for the microseconds between open and
unlink, inside the worker.)

NOTE: ``--save`` without a second write. When the run was asked with a ``directory`` (the
save folder), the worker creates its files there with ``O_TMPFILE`` (the same file system),
the parent keeps their descriptors (:class:`ValueFile`), and saving a value is a
``linkat`` of the already-written ``.npy`` into place (:meth:`ValueFile.link_to`). Where
that cannot be done the caller writes the mapped array as before.

Small values keep the pipe: below :data:`SPILL_MIN_BYTES` (32 MiB; 1 MiB when the values go to
a save folder) a new shared file costs more than sending the bytes
(``tests/benchmarks/bench_values.py --crossover``).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "SPILL_MIN_BYTES",
    "SharedRef",
    "ValueFile",
    "adopt_values",
    "can_share",
    "close_handles",
    "spill_values",
]

#: tensors at least this big travel in a shared file, smaller ones in the pipe. Measured
#: (``bench_values.py --crossover``, which sets it through the environment): the pipe costs
#: 0.3 ms per MiB up to 16 MiB, a file 1.2 ms (new shared pages are zeroed, then faulted in
#: 4 KiB at a time by the reader); at 64 MiB the file wins, 65 ms against 91.
SPILL_MIN_BYTES = int(os.environ.get("ONNX_STUDIO_SPILL_MIN_BYTES", 32 << 20))
#: the same when the values will be saved into the run's folder: then the pipe's way costs
#: a second write of the whole value (``np.save``), the file's way a link
SAVE_SPILL_MIN_BYTES = min(SPILL_MIN_BYTES, 1 << 20)
#: the most descriptors the parent keeps open for ``--save`` links (the rest are saved by copy)
KEEP_MAX = 256
_WRITE_CHUNK = 1 << 30


def can_share() -> bool:
    """Whether descriptors can pass between the processes (POSIX: Unix-socket pipes)."""
    return sys.platform != "win32" and hasattr(os, "O_RDWR")


@dataclass(frozen=True)
class SharedRef:
    """Where one value is: the ``index``-th descriptor of the reply, at ``offset``."""

    index: int
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int
    #: the file is a complete ``.npy`` (header + data): it can be linked into place as one
    npy: bool


def _npy_header(arr: np.ndarray) -> bytes | None:
    """The ``.npy`` header for ``arr`` (C order), or None when numpy cannot describe its
    dtype in a file that loads back the same (``ml_dtypes`` floats)."""
    try:
        descr = np.lib.format.dtype_to_descr(arr.dtype)
        if np.lib.format.descr_to_dtype(descr) != arr.dtype:
            return None
    except (ValueError, TypeError):
        return None
    header = {"descr": descr, "fortran_order": False, "shape": tuple(arr.shape)}
    import io

    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, header)  # padded so the data is 64-byte aligned
    except ValueError:  # a header over 64 KiB (a shape of very many dims)
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, header)
    return buf.getvalue()


def _nameless_file(directory: str | None) -> int:
    """A read-write descriptor of a new file with no name (see module NOTE)."""
    if directory is not None and hasattr(os, "O_TMPFILE"):
        try:  # no O_EXCL: the parent may link it into the folder (--save)
            return os.open(directory, os.O_TMPFILE | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError:
            pass  # a file system without O_TMPFILE: fall through
    if directory is None and hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("onnx-studio-value", os.MFD_CLOEXEC)
        except OSError:
            pass
    fd, path = tempfile.mkstemp(prefix="onnx-studio-value-", dir=directory)
    os.unlink(path)
    return fd


def _write_all(fd: int, data: memoryview) -> None:
    pos, total = 0, data.nbytes
    while pos < total:
        pos += os.write(fd, data[pos:pos + _WRITE_CHUNK])


def _spill_one(arr: np.ndarray, directory: str | None, handles: list[int]) -> SharedRef:
    arr = np.ascontiguousarray(arr)
    header = _npy_header(arr)
    fd = _nameless_file(directory)
    try:
        if header:
            _write_all(fd, memoryview(header))
        _write_all(fd, memoryview(arr.reshape(-1).view(np.uint8)))
    except BaseException:
        os.close(fd)
        raise
    handles.append(fd)
    return SharedRef(len(handles) - 1, arr.dtype, tuple(arr.shape), len(header or b""), header is not None)


def _worth_spilling(value: Any, least: int) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind not in "OUS" and value.nbytes >= least


def spill_values(values: dict[str, Any], directory: str | None = None) -> list[int]:
    """Worker side: replace, in place, every big tensor of ``values`` (inside sequences,
    maps and optionals too) by a :class:`SharedRef`; returns the descriptors to send. Each
    array is dropped as soon as it is written, so the worker holds one copy at most."""
    handles: list[int] = []
    least = SPILL_MIN_BYTES if directory is None else SAVE_SPILL_MIN_BYTES

    def walk(value: Any) -> Any:
        if _worth_spilling(value, least):
            return _spill_one(value, directory, handles)
        if isinstance(value, list):
            for i, v in enumerate(value):
                value[i] = walk(v)
        elif isinstance(value, dict):
            for k in list(value):
                value[k] = walk(value[k])
        return value

    try:
        for name in list(values):
            values[name] = walk(values[name])
    except BaseException:
        close_handles(handles)
        raise
    return handles


def close_handles(handles: list[int]) -> None:
    for fd in handles:
        try:
            os.close(fd)
        except OSError:
            pass
    handles.clear()


class ValueFile:
    """A value's nameless file the parent still holds open, so ``--save`` can link it."""

    def __init__(self, fd: int, npy: bool) -> None:
        self.fd: int | None = fd
        self.npy = npy

    def link_to(self, path: str | os.PathLike[str]) -> bool:
        """Give the file the name ``path`` (replacing what is there); False when this
        file system or platform cannot (the caller then writes the value itself)."""
        if self.fd is None or not self.npy or not sys.platform.startswith("linux"):
            return False
        target = os.fspath(path)
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(self.fd, 0o666 & ~umask)  # as a file np.save creates
            tmp = f"{target}.{os.getpid()}.part"
            _link_descriptor(self.fd, tmp)
        except OSError:
            return False
        try:
            os.replace(tmp, target)
        except OSError:
            os.unlink(tmp)
            return False
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:
        self.close()


_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000


def _link_descriptor(fd: int, path: str) -> None:
    """Give the nameless file ``fd`` the name ``path`` (Linux ``linkat``): through
    ``/proc/self/fd`` (any user), else with ``AT_EMPTY_PATH`` (which some kernels allow only
    with CAP_DAC_READ_SEARCH, and some sandboxes need: their /proc links are another device)."""
    try:
        os.link(f"/proc/self/fd/{fd}", path, follow_symlinks=True)
        return
    except OSError as exc:
        first = exc
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.linkat(fd, b"", _AT_FDCWD, os.fsencode(path), _AT_EMPTY_PATH) != 0:
        raise first


class _Mapping:
    """One mapped file, unmapped when the last array over it goes.

    NOTE: not :class:`mmap.mmap`: it keeps a duplicate of the descriptor open for as long as
    the mapping lives, and a run with thousands of big intermediates would run out of
    descriptors. A mapping needs no descriptor once made, so this one keeps none.
    """

    _libc: Any = None

    def __init__(self, fd: int, size: int) -> None:
        libc = _Mapping._load()
        # copy-on-write: readers share the pages; a caller that writes into a result gets
        # its own page and never changes the file (which --save may link into place)
        addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0)
        if addr is None or addr == ctypes.c_void_p(-1).value:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot map a run's value of {size} bytes: {os.strerror(err)}")
        self.addr, self.size = addr, size
        self.__array_interface__ = {"data": (addr, False), "shape": (size,), "typestr": "|u1", "version": 3}

    @staticmethod
    def _load() -> Any:
        if _Mapping._libc is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            _Mapping._libc = libc
        return _Mapping._libc

    def __del__(self) -> None:
        if getattr(self, "addr", None):
            _Mapping._libc.munmap(self.addr, self.size)
            self.addr = None


def _map(fd: int, ref: SharedRef) -> np.ndarray:
    count = int(np.prod(ref.shape, dtype=np.int64))
    size = ref.offset + count * ref.dtype.itemsize
    raw = np.asarray(_Mapping(fd, size))  # the array's base keeps the mapping alive
    return raw[ref.offset:].view(ref.dtype).reshape(ref.shape)


def adopt_values(values: dict[str, Any], handles: list[int], *, keep: bool = False) -> dict[str, ValueFile]:
    """Parent side: replace, in place, every :class:`SharedRef` in ``values`` by an array
    mapped from its descriptor. The descriptors are closed (the mappings keep the memory)
    unless ``keep``: then top-level values' files come back by name for :meth:`ValueFile.link_to`
    (at most :data:`KEEP_MAX`). Every descriptor is consumed, even when mapping fails."""
    files: dict[str, ValueFile] = {}
    used: set[int] = set()

    def walk(value: Any, name: str | None) -> Any:
        if isinstance(value, SharedRef):
            fd = handles[value.index]
            used.add(value.index)
            kept = False
            try:
                arr = _map(fd, value)
                if keep and name is not None and len(files) < KEEP_MAX:
                    files[name] = ValueFile(fd, value.npy)
                    kept = True
            finally:
                if not kept:
                    os.close(fd)
            return arr
        if isinstance(value, list):
            for i, v in enumerate(value):
                value[i] = walk(v, None)
        elif isinstance(value, dict):
            for k in list(value):
                value[k] = walk(value[k], None)
        return value

    try:
        for key in list(values):
            values[key] = walk(values[key], key)
    finally:
        close_handles([fd for i, fd in enumerate(handles) if i not in used])
        handles.clear()
    return files
