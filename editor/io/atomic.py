"""Atomic file replacement: temporary file in the same folder, write, fsync, rename.

A :class:`Transaction` groups the files of one save (external data files first, the model
last). Nothing is renamed until every file is fully written and fsynced; if anything fails
before that, the temporary files are removed and every old file is untouched. If a rename
fails half-way (rare: same folder, same filesystem), the files already replaced are put back
from hard-link backups taken just before, where the filesystem allows hard links.
"""

from __future__ import annotations

import os
import stat
import tempfile
import uuid
from pathlib import Path
from types import TracebackType

#: Indirection so tests can simulate a full disk (``OSError(ENOSPC)``) on write.
_write = os.write
_fsync = os.fsync

CHUNK = 64 << 20  # bytes per write() call; keeps each syscall and its page-ins bounded


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# NOTE: read once at import: os.umask can only be read by setting it, which would race with
# other threads creating files if done on every save.
_UMASK = _read_umask()


class AtomicFile:
    """A temporary file that becomes ``target`` when its transaction commits."""

    def __init__(self, target: Path) -> None:
        self.target = target
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        self._fd: int | None = fd
        self.tmp = Path(tmp)
        self.size = 0
        # mkstemp creates 0600; give the file the mode the old one had, or what a plain
        # open() would give a new file (0666 less the umask), as onnx.save would
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = 0o666 & ~_UMASK
        try:
            os.fchmod(fd, mode)
        except (OSError, AttributeError):  # pragma: no cover - no fchmod on this platform
            pass

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        if view.ndim != 1 or view.itemsize != 1:
            view = view.cast("B")
        assert self._fd is not None, "write after finish"
        while len(view):
            n = _write(self._fd, view[:CHUNK])
            if n <= 0:  # pragma: no cover - os.write raises instead
                raise OSError(f"write to '{self.tmp}' wrote nothing")
            self.size += n
            view = view[n:]

    def pad_to(self, offset: int) -> None:
        """Write zero bytes up to ``offset`` (used to align tensors)."""
        if offset > self.size:
            self.write(bytes(offset - self.size))

    def finish(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                _fsync(fd)
            finally:
                os.close(fd)

    def discard(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


class Transaction:
    """Several atomic files committed together, in the order they were opened."""

    def __init__(self) -> None:
        self.files: list[AtomicFile] = []
        self.committed = False

    def open(self, target: Path) -> AtomicFile:
        f = AtomicFile(target)
        self.files.append(f)
        return f

    def drop(self, f: AtomicFile) -> None:
        """Give up one file of the transaction (its target stays as it was)."""
        f.discard()
        self.files.remove(f)

    def commit(self) -> None:
        for f in self.files:
            f.finish()
        done: list[tuple[AtomicFile, Path | None, bool]] = []
        backups: list[Path] = []
        try:
            for f in self.files:
                existed = os.path.lexists(f.target)
                # a lone file needs no backup: if its rename fails, nothing was replaced
                backup = _backup(f.target) if existed and len(self.files) > 1 else None
                if backup is not None:
                    backups.append(backup)
                os.replace(f.tmp, f.target)
                done.append((f, backup, existed))
        except BaseException:
            for f, backup, existed in reversed(done):
                try:
                    if backup is not None:
                        os.replace(backup, f.target)
                    elif not existed:
                        os.unlink(f.target)
                except OSError:
                    pass
            raise
        finally:
            for backup in backups:
                try:
                    os.unlink(backup)
                except OSError:
                    pass
        self.committed = True
        for folder in {f.target.parent for f in self.files}:
            _fsync_dir(folder)

    def abort(self) -> None:
        for f in self.files:
            f.discard()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        if not self.committed:
            self.abort()


def _backup(target: Path) -> Path | None:
    """A hard link to the current ``target`` (to restore it if a later rename fails)."""
    backup = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.bak")
    try:
        os.link(target, backup, follow_symlinks=False)
    except (OSError, NotImplementedError):
        return None
    return backup


def _fsync_dir(folder: Path) -> None:
    """Make the renames durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        _fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
