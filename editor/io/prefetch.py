"""Read a model file in the background while the program is still starting.

``onnx-studio MODEL`` knows its file before it imports Qt and builds the window, which
takes about a second of CPU; reading a 219 MB file takes a fifth of a second more, mostly
in the kernel (the page cache copied into our memory), with the GIL released. So the
application starts the read at once on a thread of its own (:func:`prefetch`), and
:func:`~editor.io.load.load_model` takes the bytes (:func:`take`) instead of reading the
file again: on two cores the read is done by the time the window asks for the model.

NOTE: a prefetch is used only for the file it was read from. The file's identity (device,
inode, size, modification time) is taken before and after the read and must match a
``stat`` at load time; otherwise (the file was replaced or written meanwhile, another path)
the loader reads the file itself, as it would have. Bytes are handed out once: the loader
owns them then, and nothing is kept for a second open.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field

__all__ = ["prefetch", "take"]

Identity = tuple[int, int, int, int]


def identity(st: os.stat_result) -> Identity:
    """What says "the same file, unchanged": device, inode, size, modification time."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Read:
    thread: threading.Thread | None = None
    data: bytes | None = None
    #: the file's identity before and after the read (None: the read failed)
    before: Identity | None = None
    after: Identity | None = None
    done: threading.Event = field(default_factory=threading.Event)


_reads: dict[str, _Read] = {}
_lock = threading.Lock()


def _key(path: str | os.PathLike) -> str:
    return os.path.realpath(path)


def prefetch(path: str | os.PathLike) -> None:
    """Start reading ``path`` on a background thread (nothing happens if it is not a
    regular file or cannot be read: the loader then says why, as always)."""
    key = _key(path)
    read = _Read()
    with _lock:
        if key in _reads:
            return
        _reads[key] = read

    def run() -> None:
        try:
            with open(key, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return
                read.before = identity(st)
                read.data = f.read()
                read.after = identity(os.fstat(f.fileno()))
        except (OSError, MemoryError):
            read.data = None
        finally:
            read.done.set()

    read.thread = threading.Thread(target=run, name="onnx-studio-prefetch", daemon=True)
    read.thread.start()


def take(path: str | os.PathLike, st: os.stat_result) -> bytes | None:
    """The bytes prefetched for ``path`` when they are the file ``st`` describes (waits for
    a read still under way); None when there is no such prefetch. Either way the prefetch
    of ``path`` is forgotten."""
    with _lock:
        read = _reads.pop(_key(path), None)
    if read is None:
        return None
    read.done.wait()
    if read.data is None or read.before is None or read.before != read.after or read.before != identity(st):
        return None
    return read.data
