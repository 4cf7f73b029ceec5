"""Declared shapes against what the model computes, over the whole main graph.

Making a batch dim dynamic (``batch`` on the input and outputs) in a detector whose
Reshape hard-codes a 1 gives a model that onnx.checker accepts (a symbolic dim "agrees"
with any size) and that onnxruntime runs, returning shape ``[1, ...]`` against a declared
``[batch, ...]``. Such declarations promise what the model does not do; they are warnings:

* a declared *symbolic* dim (``batch``) of a graph output or value_info where shape
  inference (with the model's own weights) computes a fixed size;
* a declared fixed size where inference computes a different one (onnx's full check also
  rejects this; here it is said even without ``--full``);
* a declared negative size (``dim_value: -1``: not a size; a symbolic name or an unknown
  dim says "varies").

NOTE: inference runs in onnx's lenient mode (no error stops it); it is C++ and takes
milliseconds on models of thousands of nodes, so plain ``check`` runs it too. Only the main
graph's outputs and value_info are compared: they are the model's interface and the types
tools read, and subgraph declarations are the live per-node checks' business.
"""

from __future__ import annotations

import onnx

from editor.validation.problems import WARNING

#: (code, message, value name, severity): as :data:`editor.validation.full.RawProblem`,
#: without node candidates
Finding = tuple[str, str, str, str]


def _dims(tp: onnx.TypeProto) -> list[onnx.TensorShapeProto.Dimension] | None:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return list(tp.tensor_type.shape.dim)


def _dim_text(d: onnx.TensorShapeProto.Dimension) -> str:
    if d.HasField("dim_value"):
        return str(d.dim_value)
    return repr(d.dim_param) if d.dim_param else "?"


def negative_dims(tp: onnx.TypeProto) -> list[tuple[int, int]]:
    """(axis, value) of every negative fixed dim a type declares."""
    dims = _dims(tp) or []
    return [(k, d.dim_value) for k, d in enumerate(dims) if d.HasField("dim_value") and d.dim_value < 0]


def negative_dim_message(what: str, found: list[tuple[int, int]]) -> str:
    k, value = found[0]
    return (f"{what} declares dim {k} as {value}: a size is never negative (give the dim a "
            "symbolic name, or leave it unknown, to say it varies)")


def compare_declared(declared: onnx.TypeProto, inferred: onnx.TypeProto) -> str | None:
    """How ``declared`` contradicts ``inferred`` dim by dim (None when it does not)."""
    a, b = _dims(declared), _dims(inferred)
    if a is None or b is None or len(a) != len(b):
        return None  # rank conflicts are the checker's errors
    for k, (d, i) in enumerate(zip(a, b)):
        if not i.HasField("dim_value") or i.dim_value < 0:
            continue
        if d.HasField("dim_value"):
            if d.dim_value >= 0 and d.dim_value != i.dim_value:
                return f"declares dim {k} as {d.dim_value} but the model computes {i.dim_value}"
        elif d.dim_param:
            return (f"declares dim {k} as {d.dim_param!r} (varies) but the model always computes "
                    f"{i.dim_value} there")
    return None


def declared_dim_findings(model: onnx.ModelProto, *, negatives: bool = True) -> list[Finding]:
    """Warnings for the main graph's declarations the model contradicts (see the module);
    ``negatives=False`` leaves out negative sizes (the live graph check reports those)."""
    g = model.graph
    out: list[Finding] = []
    declared = [("graph output", vi) for vi in g.output] + [("value", vi) for vi in g.value_info]
    for kind, vi in [("graph input", vi) for vi in g.input] + declared:
        found = negative_dims(vi.type) if negatives else None
        if found:
            out.append(("declared-dim", negative_dim_message(f"{kind} {vi.name!r}", found), vi.name, WARNING))
    if not any(_dims(vi.type) for _, vi in declared):
        return out
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 - lenient inference can still fail (a model over 2 GB): nothing to say
        return out
    types = {vi.name: vi.type for vi in list(inferred.graph.output) + list(inferred.graph.value_info)}
    for kind, vi in declared:
        got = types.get(vi.name)
        if got is None or got == vi.type or negative_dims(vi.type):
            continue
        conflict = compare_declared(vi.type, got)
        if conflict:
            out.append(("declared-dim", f"{kind} {vi.name!r} {conflict}", vi.name, WARNING))
    # where onnx's inference knows the whole type, onnx's checks (here and the live per-node
    # ones) speak; the engine speaks where onnx gives up
    known = {name for name, tp in types.items() if tp.WhichOneof("value") == "tensor_type"
             and tp.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in tp.tensor_type.shape.dim)}
    out += _engine_findings(model, declared, {f[2] for f in out} | known)
    return out


def _engine_findings(model: onnx.ModelProto, declared: list[tuple[str, onnx.ValueInfoProto]],
                     said: set[str]) -> list[Finding]:
    """What our shape engine finds that onnx's inference cannot: it carries formulas through
    shape arithmetic, so it knows sizes (and ranks) where onnx gives up. A stale rank-2
    ``value_info`` over a rank-3 value (ddddocr's OCR model) is found only this way."""
    from editor.shapes import infer_model
    from editor.shapes.facts import graph_conflicts

    try:
        conflicts = graph_conflicts(model.graph, infer_model(model))
    except Exception:  # noqa: BLE001 - the engine refusing a model costs its findings, never the check
        return []
    kinds = {vi.name: (kind, vi) for kind, vi in declared}
    return [("declared-dim", f"{kinds[name][0]} {name!r}: {message}", name, WARNING)
            for name, message in conflicts.items()
            if name not in said and name in kinds and not negative_dims(kinds[name][1].type)]


def run_shape_notes(
    model: onnx.ModelProto,
    input_shapes: dict[str, tuple[int, ...]],
    output_shapes: dict[str, tuple[int, ...]],
) -> dict[str, str]:
    """For a run's graph outputs whose shape contradicts the declared one: name -> a note
    saying how ("declared [batch,3549,6]: dim 0 'batch' is 3 in the inputs, got 1").

    Symbolic dims are bound from the inputs' actual shapes first (``batch`` = 3 when a
    [batch, 3, 640, 640] input was fed [3, ...]), then by the first output that shows them;
    a later disagreement is a contradiction, as is a fixed dim or a rank that differs.
    """
    bound: dict[str, tuple[int, str]] = {}  # symbol -> (size, where it was bound)
    for vi in model.graph.input:
        shape = input_shapes.get(vi.name)
        dims = _dims(vi.type)
        if shape is None or dims is None or len(dims) != len(shape):
            continue
        for d, size in zip(dims, shape):
            if d.dim_param and d.dim_param not in bound:
                bound[d.dim_param] = (int(size), f"input {vi.name!r}")
    notes: dict[str, str] = {}
    for vi in model.graph.output:
        shape = output_shapes.get(vi.name)
        dims = _dims(vi.type)
        if shape is None or dims is None:
            continue
        declared = "[" + ",".join(_dim_text(d).strip("'") for d in dims) + "]"
        got = "[" + ",".join(str(s) for s in shape) + "]"
        if len(dims) != len(shape):
            notes[vi.name] = f"declared {declared} (rank {len(dims)}), got {got} (rank {len(shape)})"
            continue
        why: list[str] = []
        for k, (d, size) in enumerate(zip(dims, shape)):
            if d.HasField("dim_value") and d.dim_value >= 0 and d.dim_value != size:
                why.append(f"dim {k} is declared {d.dim_value}")
            elif d.dim_param:
                have = bound.get(d.dim_param)
                if have is None:
                    bound[d.dim_param] = (int(size), f"output {vi.name!r}")
                elif have[0] != size:
                    why.append(f"dim {k} {d.dim_param!r} is {have[0]} in {have[1]}")
        if why:
            notes[vi.name] = f"declared {declared}, got {got}: {'; '.join(why)}"
    return notes
