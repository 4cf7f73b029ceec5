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

A file of a size worth it also gets a :mod:`~editor.io.utf8_probe`: a child process that
tells the loader, from a second core, whether every string field of the file is UTF-8, so
the loader can skip its own walk of every name.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field

from editor.io import utf8_probe
from editor.io.utf8_probe import Probe, identity

__all__ = ["Prefetched", "identity", "prefetch", "take"]

Identity = utf8_probe.Identity

#: files from this size up get a UTF-8 probe: below it the loader's own walk of the names
#: costs a few milliseconds, less than starting a process. Above the upper bound the probe's
#: copy of what it parses (all but the main graph's weights) could cost more memory than the
#: walk saves time.
PROBE_MIN_BYTES = 1 << 20
PROBE_MAX_BYTES = 1 << 30


@dataclass
class Prefetched:
    """What the loader takes: the file's bytes, and the probe judging its names (if any)."""

    data: bytes
    probe: Probe | None = None


@dataclass
class _Read:
    thread: threading.Thread | None = None
    data: bytes | None = None
    #: the file's identity before and after the read (None: the read failed)
    before: Identity | None = None
    after: Identity | None = None
    done: threading.Event = field(default_factory=threading.Event)
    probe: Probe | None = None


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
    try:
        size = os.stat(key).st_size
    except OSError:
        return
    if PROBE_MIN_BYTES <= size <= PROBE_MAX_BYTES:
        read.probe = utf8_probe.start(key)


def take(path: str | os.PathLike, st: os.stat_result) -> Prefetched | None:
    """The bytes prefetched for ``path`` (and their UTF-8 probe) when they are the file
    ``st`` describes (waits for a read still under way); None when there is no such
    prefetch. Either way the prefetch of ``path`` is forgotten."""
    with _lock:
        read = _reads.pop(_key(path), None)
    if read is None:
        return None
    read.done.wait()
    if read.data is None or read.before is None or read.before != read.after or read.before != identity(st):
        if read.probe is not None:
            read.probe.cancel()  # it judges bytes the loader will not use
        return None
    return Prefetched(read.data, read.probe)
