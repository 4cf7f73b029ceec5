"""Is every string field of a model file UTF-8? Answered by a second process, in C.

The loader must repair names that are not UTF-8 before anything reads them (see
:mod:`editor.io.names`), so it looks at every string of the model: on an 11,812-node export
(178k messages) that walk costs 0.3 s of CPU, one seventh of the start-up before the first
picture, and no thread can take it off that path (the walk holds the GIL, as do the imports
and the window it would run beside).

NOTE: a second core can. When ``onnx-studio MODEL`` starts, :mod:`editor.io.prefetch` runs
this file as a script in a child process (:func:`start`). The child parses the file (its
main graph's weight bytes left out, see the NOTE at ``_judge``) with a copy of ONNX's schema
declared under protobuf edition 2023, whose string fields have ``utf8_validation = VERIFY``:
protobuf's C parser then rejects the bytes if any string field anywhere in the model
(subgraphs, functions, attributes, metadata) is not valid UTF-8, exactly the fields that
python-protobuf would hand out as ``bytes``. It prints one line:
the file's identity (device, inode, size, modification time) before and after its read,
and whether the parse succeeded.

The loader trusts only "all UTF-8" for the very file it loads. When it has parsed the
file, it takes the verdict if there is one; otherwise it starts its own walk and asks
again every few hundred messages, stopping as soon as the child says "all UTF-8". Any
other answer (a bad name, another file, a failure) lets the walk run to its end. So the
probe never costs the loader more than a few system calls, and it runs at a lower
priority: on a busy machine the application's own start-up keeps the cores.

The child imports nothing of this application and not the ``onnx`` package (its import
costs 0.2 s): only protobuf and ONNX's generated schema module, loaded from its file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Probe", "identity", "start"]

Identity = tuple[int, int, int, int]

#: what the child prints before its verdict, so stray output cannot be mistaken for one
_TAG = "ONNX-STUDIO-UTF8 "


def identity(st: os.stat_result) -> Identity:
    """What says "the same file, unchanged": device, inode, size, modification time."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class Probe:
    """A child process judging one file (see :func:`start`)."""

    process: subprocess.Popen
    #: what the child printed: (identity before its read, after it, verdict); None before
    #: it answered or when it printed nothing usable
    _answer: tuple | None = None
    _done: bool = False

    def verdict(self, identity: Identity, timeout: float = 0.0) -> bool | None:
        """True when the child parsed the file with this ``identity`` (unchanged during its
        look) and found every string field UTF-8; False for any other answer (a bad name,
        another file, a parse or start failure); None while it is still at work after
        waiting ``timeout`` seconds."""
        if not self._done:
            running = self.process.poll() is None  # (one system call: the walk asks often)
            if running and timeout <= 0:
                return None
            try:
                # (an exited child's line is in the pipe: read to its end, no time limit)
                out, _ = self.process.communicate(timeout=timeout if running else None)
            except subprocess.TimeoutExpired:
                return None
            except (OSError, ValueError):
                out = ""
            self._done = True
            for line in out.splitlines():
                if line.startswith(_TAG):
                    try:
                        self._answer = tuple(json.loads(line[len(_TAG):]))
                    except ValueError:
                        pass
                    break
        if self._answer is None or len(self._answer) != 3:
            return False
        before, after, ok = self._answer
        return ok is True and before == after == list(identity)

    def cancel(self) -> None:
        """Stop the child (nothing to wait for: it holds no lock and writes no file)."""
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.communicate(timeout=5)
        except (subprocess.TimeoutExpired, OSError, ValueError):
            pass
        self._done = True


def start(path: str) -> Probe | None:
    """Start judging ``path`` in a child process; None where that cannot help: a frozen
    application (no interpreter to run this file with) or a single core."""
    if getattr(sys, "frozen", False) or not sys.executable:
        return None
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if cores < 2:
        return None  # the child would take the only core from the start-up it means to speed
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(__file__), path],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # Windows: no console flashes up
        )
    except OSError:
        return None
    return Probe(process)


# -- the child ----------------------------------------------------------------------------

def _verifying_model_class() -> type:
    """``onnx.ModelProto`` from ONNX's own schema, re-declared under edition 2023 (string
    fields verified as UTF-8 while parsing) in a pool of its own."""
    import importlib.util

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    spec = importlib.util.find_spec("onnx")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("onnx is not installed")
    source = os.path.join(list(spec.submodule_search_locations)[0], "onnx_ml_pb2.py")
    schema_spec = importlib.util.spec_from_file_location("onnx.onnx_ml_pb2", source)
    schema = importlib.util.module_from_spec(schema_spec)
    schema_spec.loader.exec_module(schema)
    file_proto = descriptor_pb2.FileDescriptorProto()
    schema.DESCRIPTOR.CopyToProto(file_proto)
    file_proto.name = "onnx-studio-utf8-probe/" + file_proto.name
    file_proto.syntax = "editions"
    file_proto.edition = descriptor_pb2.Edition.EDITION_2023  # its default: utf8_validation VERIFY
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{file_proto.package}.ModelProto"))


# NOTE (at _judge): the weights. A parse copies every byte of the file, and a read before it
# another: 440 MB of memory written for a 219 MB export, which slowed the application
# starting on the other core by a quarter (its CPU time, not only its wall time). The weights of the
# main graph's initializers (``raw_data``, a bytes field: nothing to verify) are left out:
# the file is mapped, not read, and what is parsed is the model rebuilt from slices of it
# without them, a few percent of the file. The rebuild reads only field tags and lengths;
# anything it does not expect (a field in the wrong wire type, a length past the end) stops
# it, and the probe gives no verdict.

class _Malformed(Exception):
    pass


def _varint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(buf: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """``(number, wire type, start of the tag, start of the payload, end)`` of each field of
    the message serialized in ``buf[start:end]``."""
    pos = start
    while pos < end:
        tag = pos
        key, pos = _varint(buf, pos, end)
        wire = key & 7
        body = pos
        if wire == 0:
            _, pos = _varint(buf, pos, end)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            n, body = _varint(buf, pos, end)
            pos = body + n
        elif wire == 5:
            pos += 4
        else:
            raise _Malformed  # groups: not in ONNX's schema
        if pos > end:
            raise _Malformed
        yield key >> 3, wire, tag, body, pos


def _without(buf: memoryview, start: int, end: int, path: tuple[int, ...], drop: int, out: list) -> None:
    """Append to ``out`` the message in ``buf[start:end]`` re-serialized without field
    ``drop`` of the messages reached through the field numbers ``path``."""
    run = start  # the start of the bytes copied as they are
    for number, wire, tag, body, stop in _fields(buf, start, end):
        if not path:
            if number == drop:
                out.append(buf[run:tag])
                run = stop
            continue
        if number == path[0] and wire == 2:
            out.append(buf[run:tag])
            inner: list = []
            _without(buf, body, stop, path[1:], drop, inner)
            payload = b"".join(inner)
            out.append(_encode_varint(number << 3 | 2) + _encode_varint(len(payload)))
            out.append(payload)
            run = stop
    out.append(buf[run:end])


def _judge(path: str) -> tuple[Identity | None, Identity | None, bool | None]:
    """(identity before the look, after it, every string field UTF-8?) of ``path``; the
    verdict is None when the bytes do not parse at all, for whatever reason."""
    import mmap

    model_class = _verifying_model_class()
    fields = model_class.DESCRIPTOR.fields_by_name
    graph_field = fields["graph"]
    initializer = graph_field.message_type.fields_by_name["initializer"]
    raw_data = initializer.message_type.fields_by_name["raw_data"]
    with open(path, "rb") as f:
        before = identity(os.fstat(f.fileno()))
        if before[2] == 0:
            return before, before, None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                parts: list = []
                _without(view, 0, len(view), (graph_field.number, initializer.number), raw_data.number, parts)
                data = b"".join(parts)
            except _Malformed:
                return before, identity(os.fstat(f.fileno())), None
            finally:
                parts = []
                view.release()
        after = identity(os.fstat(f.fileno()))
    try:
        model_class().ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - any failure means "not known to be clean"
        return before, after, False if "UTF-8" in str(exc) else None
    return before, after, True


def _main(argv: list[str]) -> int:
    if hasattr(os, "nice"):
        # second in line for a core: on a busy machine the application's own start-up comes
        # first, and the loader walks the names itself when no verdict has come by then
        os.nice(10)
    try:
        before, after, ok = _judge(argv[0])
    except Exception:  # noqa: BLE001 - no verdict; the loader walks the names itself
        return 1
    print(_TAG + json.dumps([before, after, ok]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
