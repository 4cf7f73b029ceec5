"""Scripting: the same commands from Python, in the console dock or headless.

A script sees ``doc``, a :class:`ScriptAPI` bound to the open document, plus ``commands``
(:mod:`editor.commands`), ``passes``, ``np`` and ``onnx``. Every edit it makes is a command
on the document's undo stack, exactly as if it had been made in the window::

    conv = doc.nodes(op_type="Conv")[0]
    doc.set_attribute(conv, "strides", [2, 2])
    doc.rename_value(doc.inputs()[0], "pixels")
    doc.execute(commands.SetModelField("producer_name", "me"))

The history panel writes a session's edits back out as such a script
(:func:`history_script`): one ``doc.execute(commands.X(...))`` line per command. Node ids
are assigned in file order when a model is opened, so a script replays on the same file.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from editor import commands, passes
from editor.document import Command, Document, NodeId, ScopeId
from editor.errors import StudioError


class ScriptError(StudioError):
    """A script raised; ``message`` names the script line."""


class ScriptAPI:
    """What scripts call ``doc``: queries plus one method per common edit."""

    def __init__(self, document: Document) -> None:
        self.document = document

    # -- queries ---------------------------------------------------------------------------
    @property
    def model(self) -> onnx.ModelProto:
        """The live model (read it; change it only through commands)."""
        return self.document.model

    @property
    def main(self) -> ScopeId:
        return self.document.index.main

    def inputs(self, *, scope: ScopeId | None = None) -> list[str]:
        """Names of the graph's real inputs (not initializers listed as inputs, IR < 4)."""
        s = self.document.scope(self.main if scope is None else scope)
        inits = set(s.initializer_names())
        return [n for n in s.input_names() if n not in inits]

    def outputs(self, *, scope: ScopeId | None = None) -> list[str]:
        return self.document.scope(self.main if scope is None else scope).output_names()

    def nodes(self, *, op_type: str | None = None, name: str | None = None,
              scope: ScopeId | None = None) -> list[NodeId]:
        out = []
        for s, nid, node in self.document.index.iter_nodes():
            if scope is not None and s.id != scope:
                continue
            if op_type is not None and node.op_type != op_type:
                continue
            if name is not None and node.name != name:
                continue
            out.append(nid)
        return out

    def node(self, name_or_id: str | NodeId) -> NodeId:
        """The id of the node with this name (or the id itself, checked)."""
        if isinstance(name_or_id, int):
            self.document.node(name_or_id)
            return name_or_id
        found = self.nodes(name=name_or_id)
        if len(found) != 1:
            raise ScriptError(f"{len(found)} nodes are named {name_or_id!r}")
        return found[0]

    def proto(self, node: str | NodeId) -> onnx.NodeProto:
        return self.document.node(self.node(node))

    # -- editing ---------------------------------------------------------------------------
    def execute(self, command: Command) -> Command:
        return self.document.execute(command)

    def undo(self) -> bool:
        return self.document.undo()

    def redo(self) -> bool:
        return self.document.redo()

    def add_node(self, op_type: str, inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None,
                 *, scope: ScopeId | None = None, **kw: Any) -> NodeId:
        """Add a node right after the producers of its inputs (graph order stays valid);
        refused when a node already reading one of its outputs comes before them (a cycle)."""
        sid = self.main if scope is None else scope
        if "position" not in kw and (any(inputs or ()) or any(outputs or ())):
            kw["position"] = self._position_after_producers(sid, inputs or (), outputs or ())
        cmd = commands.AddNode(sid, op_type, inputs=inputs, outputs=outputs, **kw)
        self.execute(cmd)
        return cmd.node_id

    def _position_after_producers(self, sid: ScopeId, inputs: Sequence[str], outputs: Sequence[str]) -> int:
        order = {nid: k for k, nid in enumerate(self.document.scope(sid).node_ids)}
        after = max((order[p] for p in (self.document.producer(sid, n) for n in inputs if n) if p in order),
                    default=-1)
        for name in outputs:
            for reader, _ in (self.document.consumers(sid, name) if name else ()):
                if reader in order and order[reader] <= after:
                    raise ScriptError(f"adding this node makes a cycle: {name!r} is read by a node that one of "
                                      "its inputs depends on")
        return after + 1

    def weight(self, name: str, *, scope: ScopeId | None = None) -> np.ndarray:
        """A weight's values (initializer, or a Constant node's output) as a read-only numpy
        array; external data is memory-mapped, not read, until the array is used."""
        from editor.io.tensors import tensor_to_numpy

        sid = self.main if scope is None else scope
        found = self.document.initializer(sid, name)
        if found is not None:
            return tensor_to_numpy(found[1], self.document.store)
        nid = self.document.producer(sid, name)
        if nid is not None and self.document.node(nid).op_type == "Constant":
            from editor.weights import _literal_array

            for a in self.document.node(nid).attribute:
                if a.name == "value":
                    return tensor_to_numpy(a.t, self.document.store)
                if a.name in ("value_float", "value_floats", "value_int", "value_ints"):
                    return _literal_array(a)
        raise ScriptError(f"{name!r} is not a weight (no initializer or Constant of that name)")

    def delete_nodes(self, nodes: Sequence[str | NodeId], *, reconnect: bool = False) -> None:
        self.execute(commands.DeleteNodes([self.node(n) for n in nodes], reconnect=reconnect))

    def rename_node(self, node: str | NodeId, name: str) -> None:
        self.execute(commands.SetNodeField(self.node(node), "name", name))

    def set_op_type(self, node: str | NodeId, op_type: str, domain: str | None = None) -> None:
        nid = self.node(node)
        parts: list[Command] = [commands.SetNodeField(nid, "op_type", op_type)]
        if domain is not None:
            parts.append(commands.SetNodeField(nid, "domain", domain))
        self.execute(commands.CompositeCommand(f"Change op type to {op_type}", parts))

    def set_input(self, node: str | NodeId, index: int, value: str) -> None:
        self.execute(commands.SetNodeInput(self.node(node), index, value))

    def set_attribute(self, node: str | NodeId, name: str, value: Any, attr_type: int | None = None) -> None:
        self.execute(commands.SetAttribute(self.node(node), name, value, attr_type))

    def remove_attribute(self, node: str | NodeId, name: str) -> None:
        self.execute(commands.RemoveAttribute(self.node(node), name))

    def rename_value(self, old: str, new: str, *, scope: ScopeId | None = None) -> None:
        self.execute(commands.RenameValue(self.main if scope is None else scope, old, new))

    def set_value_type(self, name: str, elem_type: int, shape: Sequence[int | str | None] | None,
                       *, scope: ScopeId | None = None) -> None:
        self.execute(commands.SetValueType(self.main if scope is None else scope, name, elem_type, shape))

    def add_input(self, name: str, elem_type: int, shape: Sequence[int | str | None] | None) -> None:
        self.execute(commands.AddGraphValue(self.main, "input", name, elem_type, shape))

    def add_output(self, name: str) -> None:
        """Make a value a graph output; an untyped one gets its type from the shape engine."""
        parts: list[Command] = [commands.AddGraphValue(self.main, "output", name)]
        vi = self.document.value_info(self.main, name)
        if vi is None or not vi.HasField("type"):
            from editor.shapes import infer_model

            vs = infer_model(self.model).get(name)
            if vs.elem_type:
                from editor.shapes.symbolic import to_text

                dims = None if vs.dims is None else [
                    d if isinstance(d, int) else (None if d is None else to_text(d)) for d in vs.dims]
                parts.append(commands.SetValueType(self.main, name, vs.elem_type, dims))
        self.execute(commands.CompositeCommand(f"Add output {name!r}", parts))

    def set_initializer(self, name: str, array: np.ndarray, *, scope: ScopeId | None = None) -> None:
        sid = self.main if scope is None else scope
        if self.document.initializer(sid, name) is None:
            self.execute(commands.AddInitializer(sid, name, array))
        else:
            self.execute(commands.ReplaceInitializer(sid, name, array))

    def set_metadata(self, key: str, value: str | None) -> None:
        self.execute(commands.SetMetadataProp(key, value))

    def refresh_shapes(self, mode: str = "update", dims: dict[str, int] | None = None) -> None:
        """Rewrite value_info from the shape engine, one undoable step: ``"update"`` corrects
        stale entries and adds missing ones, ``"add"`` only adds, ``"strip"`` removes all."""
        self.execute(commands.RefreshShapes(mode, dims))

    def run_pass(self, name: str, *, fixed_point: bool = True) -> int:
        """Run a clean-up pass by name (see ``passes.CLEANUP_PASSES``); returns the rounds."""
        if name not in passes.CLEANUP_PASSES:
            raise ScriptError(f"unknown pass {name!r}; choose from {', '.join(passes.CLEANUP_PASSES)}")
        planner = passes.CLEANUP_PASSES[name]
        if fixed_point:
            return len(passes.run_to_fixed_point(self.document, planner))
        plan = planner(self.document)
        if plan.command is not None:
            self.execute(plan.command)
            return 1
        return 0


def script_namespace(document: Document) -> dict[str, Any]:
    from editor import surgery  # merge, fp16, I/O types, weights <-> inputs, patterns

    return {"doc": ScriptAPI(document), "commands": commands, "passes": passes, "np": np, "onnx": onnx,
            "surgery": surgery}


def run_script_source(source: str, document: Document, *, filename: str = "<script>",
                      namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``source`` against ``document``. On an exception, every edit the script made is
    undone (the document is as before) and a :class:`ScriptError` names the line."""
    ns = namespace if namespace is not None else script_namespace(document)
    # a script's first edit must not merge into the step before it (typing a name, then a
    # script renaming the same node), or rolling back to ``depth`` would undo too much
    document.stack.break_merge()
    depth = document.stack.index
    try:
        code = compile(source, filename, "exec")
        exec(code, ns)  # noqa: S102 - running the user's own script is the point
    except Exception as exc:  # noqa: BLE001
        while document.stack.index > depth:
            document.undo()
        line = _script_line(exc, filename)
        where = f"{Path(filename).name}:{line}: " if line else ""
        msg = exc.message if isinstance(exc, StudioError) else f"{type(exc).__name__}: {exc}"
        raise ScriptError(f"{where}{msg}", details=traceback.format_exc()) from exc
    document.stack.break_merge()
    return ns


def _script_line(exc: BaseException, filename: str) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def run_script_file(path: str | os.PathLike, document: Document) -> None:
    p = Path(path)
    try:
        source = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {str(p)!r}: {exc.strerror or exc}") from exc
    run_script_source(source, document, filename=str(p))


# -- history export ---------------------------------------------------------------------

_LITERALS = (type(None), bool, int, float, str, bytes)


def _literal(value: Any) -> str | None:
    """Python source for ``value`` if it has a faithful literal form, else None."""
    if isinstance(value, _LITERALS):
        return repr(value)
    if isinstance(value, (list, tuple)):
        parts = [_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        body = ", ".join(parts)
        return f"[{body}]" if isinstance(value, list) else f"({body}{',' if len(parts) == 1 else ''})"
    if isinstance(value, dict):
        items = [(_literal(k), _literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, np.ndarray) and value.size <= 4096 and value.dtype.kind in "biuf":
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    return None


def command_source(cmd: Command) -> str | None:
    ctor = getattr(cmd, "_ctor", None)
    if ctor is None:
        return None
    name, args, kwargs = ctor
    if not hasattr(commands, name):
        return None
    parts = [_literal(a) for a in args]
    kw = {k: _literal(v) for k, v in kwargs.items()}
    if any(p is None for p in parts) or any(v is None for v in kw.values()):
        return None
    arglist = ", ".join(parts + [f"{k}={v}" for k, v in kw.items()])
    return f"doc.execute(commands.{name}({arglist}))"


def history_script(document: Document,
                   formatter: Callable[[Command], str | None] = command_source) -> str:
    """The applied commands of the session as a script ``onnx-studio script`` can replay.

    ``formatter`` writes one command as a line of Python (None: no faithful form). The
    undo stack records what each command was made with (``_ctor``) but does not know the
    scripting API: the formatter comes from here, the caller's side."""
    lines = [
        "# ONNX Studio edit history. Replay with:",
        "#   onnx-studio script THIS_FILE.py MODEL.onnx -o OUT.onnx",
        "",
    ]
    for cmd in document.stack.commands[: document.stack.index]:
        src = formatter(cmd)
        lines.append(f"# {cmd.label}")
        lines.append(src if src is not None else "# (this step has no script form: it was made from non-literal data)")
    return "\n".join(lines) + "\n"
