"""Where a value lives, and derived copies of a model that expose intermediate values.

The user's model is never edited: :func:`expose_outputs` returns a *new* ModelProto whose
main graph lists extra outputs. Types come from ``value_info`` / inputs / outputs when the
model declares them, else from ONNX shape inference on a copy; a value whose type nothing
knows is added as a typeless ``ValueInfoProto``, which onnxruntime accepts (it infers the
type itself; checked in tests).

NOTE: values inside subgraphs (If/Loop/Scan bodies) cannot become outputs of the main graph:
they exist once per branch or iteration, and exposing them would mean rewriting the
control-flow node's outputs (and, for If, both branches). onnxruntime therefore cannot give
them without editing the model semantics; the ReferenceBackend captures them by hooking
into the evaluation of each subgraph (see backends.py), and the run falls back to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

__all__ = ["ValueScopes", "expose_outputs", "value_scopes"]


@dataclass
class ValueScopes:
    """Names defined in a model, by where they are defined."""

    inputs: list[str] = field(default_factory=list)
    initializers: set[str] = field(default_factory=set)
    outputs: list[str] = field(default_factory=list)
    #: node outputs of the main graph, in node order
    main: list[str] = field(default_factory=list)
    #: names defined inside a subgraph (node outputs, subgraph inputs) -> path like
    #: "If_0/then_branch"
    subgraph: dict[str, str] = field(default_factory=dict)

    def where(self, name: str) -> str | None:
        """'input', 'initializer', 'main', 'subgraph' or None (not in the model)."""
        if name in self._inputs_set:
            return "input"
        if name in self._main_set or name in self._outputs_set:
            return "main"
        if name in self.initializers:
            return "initializer"
        if name in self.subgraph:
            return "subgraph"
        return None

    def __post_init__(self) -> None:
        self.finish()

    def finish(self) -> None:
        self._inputs_set = set(self.inputs)
        self._main_set = set(self.main)
        self._outputs_set = set(self.outputs)


def _walk_subgraphs(graph: onnx.GraphProto, path: str, into: dict[str, str]) -> None:
    for index, node in enumerate(graph.node):
        for attr in node.attribute:
            subs = []
            if attr.type == onnx.AttributeProto.GRAPH:
                subs = [attr.g]
            elif attr.type == onnx.AttributeProto.GRAPHS:
                subs = list(attr.graphs)
            for sub in subs:
                label = f"{path}{node.name or f'{node.op_type}#{index}'}/{attr.name}"
                for vi in sub.input:
                    into.setdefault(vi.name, label)
                for sub_node in sub.node:
                    for out in sub_node.output:
                        if out:
                            into.setdefault(out, label)
                _walk_subgraphs(sub, label + "/", into)


def value_scopes(model: onnx.ModelProto) -> ValueScopes:
    g = model.graph
    inits = {i.name for i in g.initializer} | {s.values.name for s in g.sparse_initializer}
    scopes = ValueScopes(
        inputs=[i.name for i in g.input if i.name not in inits],
        initializers=inits,
        outputs=[o.name for o in g.output],
        main=[o for n in g.node for o in n.output if o],
    )
    _walk_subgraphs(g, "", scopes.subgraph)
    # A main-graph name shadows nothing: only keep subgraph names not visible at the top.
    for name in list(scopes.subgraph):
        if name in scopes._main_set or name in scopes._inputs_set or name in inits:
            del scopes.subgraph[name]
    scopes.finish()
    return scopes


def _known_types(model: onnx.ModelProto, wanted: set[str]) -> dict[str, onnx.TypeProto]:
    g = model.graph
    known: dict[str, onnx.TypeProto] = {}
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        if vi.name in wanted and vi.type.WhichOneof("value") is not None:
            known.setdefault(vi.name, vi.type)
    missing = wanted - set(known)
    if missing:
        try:
            # Shape inference on a copy; weights are not needed for types, so an external-
            # data model is fine unloaded. Failures leave the types unknown (typeless).
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
            for vi in inferred.graph.value_info:
                if vi.name in missing and vi.type.WhichOneof("value") is not None:
                    known[vi.name] = vi.type
        except Exception:  # noqa: BLE001 - inference is best effort here
            pass
    return known


def expose_outputs(model: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    """A copy of ``model`` whose main graph also outputs ``names`` (main-graph values only).

    Names that already are outputs are skipped. The copy shares nothing with ``model``.
    """
    derived = onnx.ModelProto()
    derived.CopyFrom(model)
    existing = {o.name for o in derived.graph.output}
    extra = [n for n in dict.fromkeys(names) if n not in existing]
    if not extra:
        return derived
    types = _known_types(model, set(extra))
    for name in extra:
        vi = onnx.ValueInfoProto(name=name)
        if name in types:
            vi.type.CopyFrom(types[name])
            # Declared shapes of intermediates are often stale after edits; an output shape
            # mismatch is an error in onnxruntime, so keep only the element type.
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
        derived.graph.output.append(vi)
    return derived
