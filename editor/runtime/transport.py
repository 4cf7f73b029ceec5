"""Messages between the editor and its run worker, with numpy arrays sent out of band.

Each message is a pickle (protocol 5) whose large buffers (numpy array data) travel as
separate frames straight from the array's memory (``buffer_callback``), then are received
into preallocated ``bytearray``s that the rebuilt arrays use without another copy. On POSIX
the frames are raw bytes on the pipe's descriptor, read straight into their buffer
(``multiprocessing``'s ``recv_bytes_into`` reads through an intermediate buffer: two copies
of every byte); elsewhere they are ``Connection`` frames.

A message may carry open file descriptors (``handles``): the nameless files big values live
in (:mod:`editor.runtime.shared_values`). They pass with ``SCM_RIGHTS`` after the frames,
in batches; the receiver owns them (and closes them when the caller did not ask for them).
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
from multiprocessing.connection import Connection
from typing import Any, Sequence

__all__ = ["recv_message", "send_message"]

#: descriptors per SCM_RIGHTS message (the kernel's limit is 253)
_FD_BATCH = 200
_RAW = sys.platform != "win32"
_IO_CHUNK = 1 << 30


def _write_raw(fd: int, data: memoryview) -> None:
    data = data.cast("B")
    pos, total = 0, data.nbytes
    while pos < total:
        pos += os.write(fd, data[pos:pos + _IO_CHUNK])


def _read_raw(fd: int, buf: bytearray) -> None:
    view = memoryview(buf)
    pos, total = 0, len(buf)
    while pos < total:
        n = os.readv(fd, [view[pos:pos + _IO_CHUNK]])
        if n == 0:
            raise EOFError("the other side closed the pipe mid-message")
        pos += n


def _send_handles(conn: Connection, handles: Sequence[int]) -> None:
    from multiprocessing.reduction import sendfds

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=os.dup(conn.fileno())) as sock:
        for start in range(0, len(handles), _FD_BATCH):
            sendfds(sock, list(handles[start:start + _FD_BATCH]))


def _recv_handles(conn: Connection, count: int) -> list[int]:
    from multiprocessing.reduction import recvfds

    got: list[int] = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=os.dup(conn.fileno())) as sock:
            while len(got) < count:
                batch = recvfds(sock, min(_FD_BATCH, count - len(got)))
                got.extend(batch)
    except BaseException:
        for fd in got:
            os.close(fd)
        raise
    return got


def send_message(conn: Connection, obj: Any, handles: Sequence[int] = ()) -> None:
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    conn.send((len(payload), [r.nbytes for r in raws], len(handles)))
    conn.send_bytes(payload)
    for raw in raws:
        if _RAW:
            _write_raw(conn.fileno(), raw)
        else:
            conn.send_bytes(raw)
    if handles:
        _send_handles(conn, handles)


def recv_message(conn: Connection, handles: list[int] | None = None) -> Any:
    """The next message; descriptors that came with it are appended to ``handles``
    (closed at once when ``handles`` is None: nobody asked for them)."""
    _, sizes, count = conn.recv()
    payload = conn.recv_bytes()
    buffers = []
    for size in sizes:
        buf = bytearray(size)
        if _RAW:
            _read_raw(conn.fileno(), buf)
        elif size:
            conn.recv_bytes_into(buf)
        else:
            conn.recv_bytes()
        buffers.append(buf)
    received = _recv_handles(conn, count) if count else []
    if handles is None:
        for fd in received:
            os.close(fd)
    else:
        handles.extend(received)
    return pickle.loads(payload, buffers=buffers)
