"""Atomic saves with one commit point: temporary files, fsync, then renames in a safe order.

A lone file (a model without external data, a recovery copy, an exported array) is written
to a temporary file in its folder, fsynced, and renamed over its target: the rename is the
commit point.

A model with data files (:meth:`Transaction.commit_model`) cannot be replaced by renames
alone: the model and its data file are two names, and no single rename changes both. So:

1. every data file is written and fsynced under a fresh name (``.NAME.PID-HEX.part``);
   a data file whose name is still free is renamed into place now (no model names it);
2. when some data file replaces an existing one, a model that names the fresh ``.part``
   names is renamed over the model (**the commit point**: the new model with its own
   weights, whatever the old data file holds), then each ``.part`` file is copied onto its
   final name (temporary copy, fsync, rename: ``copy_file_range`` where the kernel has it;
   a hard link would be cheaper, but onnx's reader and ours refuse multi-linked data files);
3. the model that names the final names is renamed over the model;
4. the ``.part`` names are removed, and what earlier interrupted saves of the same files
   left behind is cleaned up (:func:`clean_leftovers`).

Killed at any instant, the folder holds the old model with its old data or the new model
with its new data; only hidden leftovers differ, and the next save of those files removes
them. The old data file keeps its inode until its last name goes, so an open document
that mapped it (``ExternalDataStore.pin``) keeps reading what it opened.

NOTE: fault injection. :data:`fault_hook` is called with a label before every file-system
step of a commit (create, write, fsync, rename, copy, unlink). Tests set it to kill the
process at step k and check the folder; it is a no-op otherwise.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType

#: Indirection so tests can simulate a full disk (``OSError(ENOSPC)``) on write.
_write = os.write
_fsync = os.fsync


def _no_fault(step: str) -> None:
    return None


#: Called before each file-system step of a save (see the module docstring's NOTE).
fault_hook: Callable[[str], None] = _no_fault

CHUNK = 64 << 20  # bytes per write() call; keeps each syscall and its page-ins bounded

#: Our own temporary names: ``.NAME.PID-HEX.tmp`` (never named by a model) and
#: ``.NAME.PID-HEX.part`` (a data file a committed model may name until the save ends); older
#: releases wrote ``.NAME.XXXXXXXX.tmp`` (mkstemp) and ``.NAME.HEX12.bak`` (rename backups).
_OURS = re.compile(
    r"^\.(?P<name>.+)\.(?:(?P<pid>\d+)-[0-9a-f]{8}\.(?P<kind>tmp|part)|(?P<legacy>[a-z0-9_]{8}\.tmp|[0-9a-f]{12}\.bak))$"
)

# temporary files of transactions still running in this process (never cleaned as leftovers)
_live: set[str] = set()
_live_lock = threading.Lock()


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# NOTE: read once at import: os.umask can only be read by setting it, which would race with
# other threads creating files if done on every save.
_UMASK = _read_umask()


def temp_path(target: Path, kind: str = "tmp") -> Path:
    """A fresh hidden name beside ``target`` that :func:`clean_leftovers` recognises."""
    return target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.{kind}")


def leftover_target(name: str) -> str | None:
    """The file name a temporary of ours was written for, or None if ``name`` is not ours."""
    m = _OURS.match(name)
    return m.group("name") if m else None


class AtomicFile:
    """A temporary file that becomes ``target`` when its transaction commits."""

    def __init__(self, target: Path, kind: str = "tmp") -> None:
        self.target = target
        self.tmp = temp_path(target, kind)
        fault_hook(f"create {self.tmp.name}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.tmp, flags, 0o600)
        with _live_lock:
            _live.add(os.fspath(self.tmp))
        self._fd: int | None = fd
        self.size = 0
        # created 0600; give the file the mode the old one had, or what a plain open()
        # would give a new file (0666 less the umask), as onnx.save would
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
            fault_hook(f"write {self.tmp.name}")
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
                fault_hook(f"fsync {self.tmp.name}")
                _fsync(fd)
            finally:
                os.close(fd)

    def placed(self) -> None:
        """The temporary name is gone (renamed or unlinked): no longer ours to track."""
        with _live_lock:
            _live.discard(os.fspath(self.tmp))

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
        self.placed()


class Transaction:
    """The files of one save; see the module docstring for the order of the renames.

    ``open`` + ``commit``: every opened file is renamed over its target (meant for one file,
    or files that no model names). ``open_data`` + ``commit_model``: data files and the
    model that names them, with the model's rename as the one commit point.
    """

    def __init__(self) -> None:
        self.files: list[AtomicFile] = []
        self.committed = False
        self._made: list[AtomicFile] = []  # every temporary, for abort

    def open(self, target: Path) -> AtomicFile:
        f = AtomicFile(target)
        self.files.append(f)
        self._made.append(f)
        return f

    def open_data(self, target: Path) -> AtomicFile:
        """A data file that a model written by :meth:`commit_model` will name."""
        f = AtomicFile(target, "part")
        self.files.append(f)
        self._made.append(f)
        return f

    def drop(self, f: AtomicFile) -> None:
        """Give up one file of the transaction (its target stays as it was)."""
        f.discard()
        self.files.remove(f)
        self._made.remove(f)

    def commit(self) -> None:
        """Rename every file over its target (each rename is atomic on its own)."""
        for f in self.files:
            f.finish()
        for f in self.files:
            fault_hook(f"rename {f.tmp.name}")
            os.replace(f.tmp, f.target)
            f.placed()
        self.committed = True
        for folder in {f.target.parent for f in self.files}:
            _fsync_dir(folder)

    def commit_model(self, target: Path, render: Callable[[Mapping[Path, str]], bytes]) -> None:
        """Place the data files opened so far and the model ``render`` gives, safely.

        ``render(names)`` returns the model's bytes with each data file whose path is a key
        of ``names`` named by the file name ``names[path]`` (in the same folder) instead;
        ``render({})`` is the final model.
        """
        data = list(self.files)
        for f in data:
            f.finish()
        placed_new: list[AtomicFile] = []  # data files that took a free name (undo: unlink)
        pending: list[AtomicFile] = []  # data files replacing an existing file
        try:
            for f in data:
                if os.path.lexists(f.target):
                    pending.append(f)
                else:
                    fault_hook(f"rename {f.tmp.name}")
                    os.replace(f.tmp, f.target)
                    f.placed()
                    placed_new.append(f)
            for folder in {f.target.parent for f in data}:
                _fsync_dir(folder)
            # the commit point: the final model, or one naming the fresh names of the pending
            self._replace_model(target, render({f.target: f.tmp.name for f in pending}))
        except BaseException:
            for f in placed_new:  # nothing names them yet: put the folder back as it was
                try:
                    os.unlink(f.target)
                except OSError:
                    pass
            raise
        # from here on the folder holds the new model; later steps only tidy names
        self.committed = True
        if not pending:
            return
        for f in pending:
            _copy_onto(f.tmp, f.target)
        for folder in {f.target.parent for f in pending}:
            _fsync_dir(folder)
        self._replace_model(target, render({}))
        for f in pending:
            fault_hook(f"unlink {f.tmp.name}")
            try:
                os.unlink(f.tmp)
            except FileNotFoundError:
                pass
            f.placed()

    def _replace_model(self, target: Path, data: bytes) -> None:
        model = AtomicFile(target)
        try:
            model.write(data)
            model.finish()
            fault_hook(f"rename {model.tmp.name}")
            os.replace(model.tmp, target)
            model.placed()
        except BaseException:
            model.discard()
            raise
        _fsync_dir(target.parent)

    def abort(self) -> None:
        for f in self._made:
            f.discard()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        if not self.committed:
            self.abort()


def _copy_onto(source: Path, target: Path) -> None:
    """Put a copy of ``source`` at ``target``, atomically (temporary copy, fsync, rename).

    NOTE: a copy, not a hard link: onnx's reader (and ours) refuse data files with several
    names, so a link would make the folder unreadable to them until the save ends.
    ``copy_file_range`` copies inside the kernel (or shares blocks, on file systems that can).
    """
    alias = temp_path(target)
    fault_hook(f"copy {alias.name}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        with open(source, "rb") as src:
            fd = os.open(alias, flags, stat.S_IMODE(os.fstat(src.fileno()).st_mode))
            with open(fd, "wb", closefd=True) as dst:
                size = os.fstat(src.fileno()).st_size
                done = 0
                copy_range = getattr(os, "copy_file_range", None)
                while copy_range is not None and done < size:
                    try:
                        n = copy_range(src.fileno(), dst.fileno(), min(CHUNK, size - done), done, done)
                    except OSError:
                        n = 0
                    if n <= 0:
                        break
                    done += n
                if done < size:
                    src.seek(done)
                    dst.seek(done)
                    shutil.copyfileobj(src, dst, CHUNK)
                dst.flush()
                fault_hook(f"fsync {alias.name}")
                _fsync(dst.fileno())
        fault_hook(f"rename {alias.name}")
        os.replace(alias, target)
    except BaseException:
        try:
            os.unlink(alias)
        except OSError:
            pass
        raise


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


# ----------------------------------------------------------------------------- leftovers


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there: assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def clean_leftovers(folder: Path, names: Iterable[str], *, keep: Iterable[Path] = ()) -> list[Path]:
    """Remove what interrupted saves left in ``folder``; returns the removed paths.

    Removed: our temporaries written for one of ``names`` (the files this save just wrote),
    unless a live process of ours is writing them; and ``.tmp`` files of any name whose
    writer is dead (a ``.tmp`` is never named by a model). Never removed: ``keep`` (files
    the saved model names), files of transactions running in this process.
    """
    wanted = set(names)
    kept = {os.path.normcase(os.path.abspath(p)) for p in keep}
    removed: list[Path] = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    with _live_lock:
        live = set(_live)
    for entry in entries:
        m = _OURS.match(entry)
        if m is None:
            continue
        path = folder / entry
        if os.fspath(path) in live or os.path.normcase(os.path.abspath(path)) in kept:
            continue
        pid = int(m.group("pid")) if m.group("pid") else None
        mine = m.group("name") in wanted
        if pid is not None and pid != os.getpid() and _pid_alive(pid):
            continue  # another process is saving right now
        if not mine and (pid is None or m.group("kind") != "tmp"):
            continue  # another file's data or legacy leftover: only its own save removes it
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                continue
            os.unlink(path)
            removed.append(path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EBUSY):
                raise
    return removed
