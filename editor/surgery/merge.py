"""Merge two models: outputs of A feed inputs of B, as one model.

What ``onnx.compose.merge_models`` leaves to the user is done here, and said:

* **wiring**: a mapping ``{A value: B input}``, or, without one, every B input whose name
  and element type match an output of A;
* **names**: every name of B (values in any graph, node names) that A already uses is
  renamed to a fresh one (``x`` -> ``x_1``); the renames are listed in the result's notes;
* **opsets**: where the two import different versions of the default domain, the older
  side is converted with ``onnx.version_converter``; when it cannot be, or another domain
  differs, the merge is refused with the reason;
* **the rest**: IR version (the newer), metadata (A's value wins a clash, noted), model-local
  functions (same name must be the same function), initializers, value_info. External
  weights of B are read through B's store and stored inline when B has its own store.

The merged model's outputs are B's plus A's that no mapping consumes, unless ``outputs``
names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import onnx

from editor.commands.common import fresh_name
from editor.document import Command, Document, Transaction
from editor.errors import CommandError, first_line
from editor.io.tensors import numpy_to_tensor, tensor_to_numpy, uses_external_data

if TYPE_CHECKING:
    from editor.io import ExternalDataStore

__all__ = ["MergeModel", "MergeResult", "merge_models"]


@dataclass
class MergeResult:
    model: onnx.ModelProto
    mapping: dict[str, str]
    renamed: dict[str, str] = field(default_factory=dict)  # B's value name -> merged name
    renamed_nodes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _graphs(g: onnx.GraphProto) -> Iterable[onnx.GraphProto]:
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _graphs(sub)


def _value_names(model: onnx.ModelProto) -> set[str]:
    names: set[str] = set()
    for g in _graphs(model.graph):
        names |= {vi.name for vi in [*g.input, *g.output, *g.value_info]}
        names |= {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
        for n in g.node:
            names |= {x for x in [*n.input, *n.output] if x}
    return names


def _node_names(model: onnx.ModelProto) -> set[str]:
    return {n.name for g in _graphs(model.graph) for n in g.node if n.name}


def _rename_values(model: onnx.ModelProto, renames: Mapping[str, str]) -> None:
    def r(x: str) -> str:
        return renames.get(x, x) if x else x

    for g in _graphs(model.graph):
        for n in g.node:
            for i, x in enumerate(n.input):
                n.input[i] = r(x)
            for i, x in enumerate(n.output):
                n.output[i] = r(x)
        for vi in [*g.input, *g.output, *g.value_info]:
            vi.name = r(vi.name)
        for t in g.initializer:
            t.name = r(t.name)
        for s in g.sparse_initializer:
            s.values.name = r(s.values.name)


def _elem_type(g: onnx.GraphProto, name: str) -> int:
    for vi in [*g.input, *g.output, *g.value_info]:
        if vi.name == name and vi.type.HasField("tensor_type"):
            return vi.type.tensor_type.elem_type
    for t in g.initializer:
        if t.name == name:
            return t.data_type
    return 0


def _opsets(m: onnx.ModelProto) -> dict[str, int]:
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in m.opset_import}


def _reconcile_opsets(a: onnx.ModelProto, b: onnx.ModelProto, notes: list[str]) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    oa, ob = _opsets(a), _opsets(b)
    for domain in sorted(set(oa) & set(ob)):
        if oa[domain] == ob[domain] or domain == "":
            continue
        raise CommandError(f"the models import {domain!r} at versions {oa[domain]} and {ob[domain]}; "
                           "only the default domain can be converted")
    va, vb = oa.get(""), ob.get("")
    if va is None or vb is None or va == vb:
        return a, b
    older, newer = ("A", "B") if va < vb else ("B", "A")
    src = a if va < vb else b
    try:
        converted = onnx.version_converter.convert_version(src, max(va, vb))
    except Exception as exc:  # noqa: BLE001 - the converter's first line is the reason
        first = first_line(exc)
        raise CommandError(f"model {older} is at opset {min(va, vb)} and {newer} at {max(va, vb)}; the version "
                           f"converter cannot convert {older}: {first}") from exc
    notes.append(f"model {older} converted from opset {min(va, vb)} to {max(va, vb)} to match {newer}")
    return (converted, b) if va < vb else (a, converted)


def _inline_external(model: onnx.ModelProto, store: ExternalDataStore | None, notes: list[str]) -> None:
    from editor.io.tensors import iter_tensors

    count = 0
    for site in list(iter_tensors(model)):
        t = site.tensor
        if uses_external_data(t):
            arr = tensor_to_numpy(t, store)
            new = numpy_to_tensor(arr, t.name, elem_type=t.data_type)
            t.CopyFrom(new)
            count += 1
    if count:
        notes.append(f"{count} external weight(s) of B are stored inline (save with external data to move them out)")


def merge_models(a: onnx.ModelProto, b: onnx.ModelProto, mapping: Mapping[str, str] | None = None, *,
                 outputs: Sequence[str] | None = None, b_store: ExternalDataStore | None = None) -> MergeResult:
    """A new model running ``a`` then ``b`` (neither argument is changed)."""
    notes: list[str] = []
    ga, gb = a.graph, b.graph
    a_outputs = [o.name for o in ga.output]
    a_values = _value_names(a)
    b_inits = {t.name for t in gb.initializer}
    b_inputs = [i.name for i in gb.input if i.name not in b_inits]
    if mapping is None:
        wiring = {n: n for n in b_inputs if n in a_outputs and _elem_type(ga, n) in (0, _elem_type(gb, n))}
        if not wiring:
            raise CommandError("no output of A has the name and type of an input of B: give a mapping A_OUT=B_IN")
        # an input both models take (the same name and type) is one input of the merged model
        a_inputs = {i.name for i in ga.input} - {t.name for t in ga.initializer}
        shared = [n for n in b_inputs if n in a_inputs and n not in wiring and _elem_type(ga, n) == _elem_type(gb, n)]
        wiring.update({n: n for n in shared})
        if shared:
            notes.append(f"input(s) {', '.join(shared)} of B are fed by A's input(s) of the same name")
    else:
        wiring = dict(mapping)
        if not wiring:
            raise CommandError("the mapping is empty: say which output of A feeds which input of B")
    seen: dict[str, str] = {}
    for src, dst in wiring.items():
        if src not in a_values:
            raise CommandError(f"A has no value {src!r} (outputs: {', '.join(a_outputs) or '-'})")
        if dst in b_inits:
            raise CommandError(f"B's {dst!r} is a weight, not an input")
        if dst not in b_inputs:
            raise CommandError(f"B has no input {dst!r} (inputs: {', '.join(b_inputs) or '-'})")
        if dst in seen:
            raise CommandError(f"B's input {dst!r} is fed twice ({seen[dst]!r} and {src!r})")
        seen[dst] = src
        ta, tb = _elem_type(ga, src), _elem_type(gb, dst)
        if ta and tb and ta != tb:
            raise CommandError(f"A's {src!r} is {onnx.helper.tensor_dtype_to_np_dtype(ta)} but B's input {dst!r} "
                               f"is {onnx.helper.tensor_dtype_to_np_dtype(tb)}: set one's type first")
    for fb in b.functions:
        for fa in a.functions:
            if (fa.domain, fa.name) == (fb.domain, fb.name) and fa.SerializeToString() != fb.SerializeToString():
                raise CommandError(f"both models define a different function {fb.domain}::{fb.name}")

    a2, b2 = onnx.ModelProto(), onnx.ModelProto()
    a2.CopyFrom(a)
    b2.CopyFrom(b)
    if b_store is not None:
        _inline_external(b2, b_store, notes)
    a2, b2 = _reconcile_opsets(a2, b2, notes)

    # B's names: mapped inputs take A's names; every other name A uses gets a fresh one
    renames: dict[str, str] = {dst: src for src, dst in wiring.items()}
    taken = set(a_values) | _value_names(b2)
    for name in sorted(_value_names(b2) - set(renames)):
        if name in a_values:
            renames[name] = fresh_name(name, taken)
            taken.add(renames[name])
    renamed_vals = {k: v for k, v in renames.items() if k not in wiring.values()}
    _rename_values(b2, renames)
    node_taken = _node_names(a2) | _node_names(b2)
    renamed_nodes: dict[str, str] = {}
    a_nodes = _node_names(a2)
    for g in _graphs(b2.graph):
        for n in g.node:
            if n.name and n.name in a_nodes:
                new = fresh_name(n.name, node_taken)
                node_taken.add(new)
                renamed_nodes[n.name] = new
                n.name = new
    if renamed_vals:
        shown = ", ".join(f"{k} -> {v}" for k, v in list(renamed_vals.items())[:8])
        more = f" and {len(renamed_vals) - 8} more" if len(renamed_vals) > 8 else ""
        notes.append(f"{len(renamed_vals)} name(s) of B renamed because A uses them: {shown}{more}")
    if renamed_nodes:
        notes.append(f"{len(renamed_nodes)} node name(s) of B renamed because A uses them")

    out = onnx.ModelProto()
    out.CopyFrom(a2)
    g = out.graph
    gb2 = b2.graph
    g.node.extend(gb2.node)
    g.initializer.extend(gb2.initializer)
    g.sparse_initializer.extend(gb2.sparse_initializer)
    # B's inputs that A now feeds disappear; in IR < 4 B lists its initializers as inputs too
    g.input.extend(vi for vi in gb2.input if renames.get(vi.name, vi.name) not in wiring or vi.name in b_inits)
    inputs = _dedupe(g.input)
    del g.input[:]
    g.input.extend(inputs)
    known_vi = {vi.name for vi in g.value_info}
    g.value_info.extend(vi for vi in gb2.value_info if vi.name not in known_vi)
    consumed = set(wiring)
    all_outputs = {vi.name: vi for vi in [*ga.output, *gb2.output]}
    if outputs:
        b_to_merged = {k: v for k, v in renames.items()}
        chosen = []
        for name in outputs:
            merged_name = name if name in all_outputs or name in _value_names(out) else b_to_merged.get(name, name)
            if merged_name not in _value_names(out):
                raise CommandError(f"no value {name!r} in the merged model to make an output")
            chosen.append(merged_name)
        new_outs = []
        for name in chosen:
            if name in all_outputs:
                new_outs.append(all_outputs[name])
            else:
                vi = onnx.ValueInfoProto()
                vi.name = name
                new_outs.append(vi)
    else:
        new_outs = [vi for vi in gb2.output] + [vi for vi in ga.output if vi.name not in consumed]
    del g.output[:]
    g.output.extend(new_outs)
    # untyped outputs (picked by name) take a type from value_info or shape inference
    _type_outputs(out)
    out.ir_version = max(a2.ir_version, b2.ir_version)
    ops = _opsets(a2)
    for domain, version in _opsets(b2).items():
        if domain not in ops:
            out.opset_import.append(onnx.helper.make_opsetid(domain, version))
    have = {f"{f.domain}::{f.name}" for f in out.functions}
    out.functions.extend(f for f in b2.functions if f"{f.domain}::{f.name}" not in have)
    meta = {p.key: p.value for p in out.metadata_props}
    for p in b2.metadata_props:
        if p.key not in meta:
            out.metadata_props.append(p)
        elif meta[p.key] != p.value:
            notes.append(f"metadata {p.key!r}: A's value kept (B had {p.value[:40]!r})")
    return MergeResult(out, dict(wiring), renamed_vals, renamed_nodes, notes)


def _dedupe(items: Iterable[onnx.ValueInfoProto]) -> list[onnx.ValueInfoProto]:
    seen: set[str] = set()
    out = []
    for vi in items:
        if vi.name not in seen:
            seen.add(vi.name)
            dup = onnx.ValueInfoProto()
            dup.CopyFrom(vi)
            out.append(dup)
    return out


def _type_outputs(model: onnx.ModelProto) -> None:
    g = model.graph
    if all(o.HasField("type") for o in g.output):
        return
    typed = {vi.name: vi for vi in [*g.input, *g.value_info]}
    missing = [o for o in g.output if not o.HasField("type")]
    if any(o.name not in typed for o in missing):
        from editor.shapes import infer_model
        from editor.shapes.declare import type_proto

        try:
            table = infer_model(model)
            for o in missing:
                tp = type_proto(table.get(o.name)) if o.name not in typed else None
                if tp is not None:
                    o.type.CopyFrom(tp)
        except Exception:  # noqa: BLE001 - an output without a type is still a valid output
            pass
    for o in missing:
        if o.name in typed and not o.HasField("type"):
            o.type.CopyFrom(typed[o.name].type)


class MergeModel(Command):
    """Append model ``other`` to the document: its inputs fed by the document's values."""

    def __init__(self, other: onnx.ModelProto, mapping: Mapping[str, str] | None = None, *,
                 outputs: Sequence[str] | None = None, other_store: ExternalDataStore | None = None) -> None:
        super().__init__()
        self.other, self.mapping, self.outputs, self.other_store = other, mapping, outputs, other_store
        self.label = f"Append model {other.graph.name or 'B'!r}"
        self.result: MergeResult | None = None

    def run(self, doc: Document, tx: Transaction) -> None:
        from editor.passes.apply import ApplyModel

        self.result = merge_models(doc.model, self.other, self.mapping, outputs=self.outputs,
                                   b_store=self.other_store)
        ApplyModel(self.result.model, self.label).run(doc, tx)
