"""Messages between the editor and its run worker, with numpy arrays sent out of band.

Each message is a pickle (protocol 5) whose large buffers (numpy array data) travel as
separate frames straight from the array's memory (``buffer_callback``), then are received
into preallocated ``bytearray``s that the rebuilt arrays use without another copy. A 50 MB
tensor therefore costs one kernel copy each way instead of the several a plain pickle makes.
"""

from __future__ import annotations

import pickle
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["recv_message", "send_message"]


def send_message(conn: Connection, obj: Any) -> None:
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    conn.send((len(payload), [r.nbytes for r in raws]))
    conn.send_bytes(payload)
    for raw in raws:
        conn.send_bytes(raw)


def recv_message(conn: Connection) -> Any:
    _, sizes = conn.recv()
    payload = conn.recv_bytes()
    buffers = []
    for size in sizes:
        buf = bytearray(size)
        if size:
            conn.recv_bytes_into(buf)
        else:
            conn.recv_bytes()
        buffers.append(buf)
    return pickle.loads(payload, buffers=buffers)
