"""Opset conversion (``onnx.version_converter``) and shape inference as undoable steps."""

from __future__ import annotations

import onnx

from editor.document import Document
from editor.errors import first_line
from editor.passes.apply import ApplyModel
from editor.passes.base import PassPlan
from editor.schema import get_schema


def _copy_without_weights(doc: Document) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(doc.model)
    return m


def plan_convert_opset(doc: Document, target: int) -> PassPlan:
    """Convert the model's default-domain opset to ``target``.

    The converter either converts the whole model or fails; a failure is reported as the
    plan's warning and nothing is changed. After a conversion, ops that have no schema at
    the target opset are listed as warnings too.
    """
    name = f"Convert to opset {target}"
    current = doc.opset("")
    if current is None:
        return PassPlan(name, [], None, ["the model does not import the default ONNX domain"])
    if current == target:
        return PassPlan(name, [], None, [f"the model is already at opset {target}"])
    try:
        converted = onnx.version_converter.convert_version(_copy_without_weights(doc), target)
    except Exception as exc:  # noqa: BLE001 - the converter's own message is the reason
        first = first_line(exc)
        return PassPlan(name, [], None, [f"the converter refused: {first}"])
    warnings = []
    for node in converted.graph.node:
        if node.domain in ("", "ai.onnx") and get_schema(node.op_type, "", target) is None:
            warnings.append(f"{node.op_type} {node.name!r} has no definition at opset {target}")
    cmd = ApplyModel(converted, name)
    changes = [f"default opset {current} -> {target}"]
    changed_nodes = sum(1 for a, b in zip(doc.model.graph.node, converted.graph.node) if a.SerializeToString() != b.SerializeToString())
    changed_nodes += abs(len(doc.model.graph.node) - len(converted.graph.node))
    changes.append(f"about {changed_nodes} node(s) rewritten")
    return PassPlan(name, changes, cmd, warnings)


def plan_infer_shapes(doc: Document) -> PassPlan:
    """Record the shapes onnx can infer as value_info entries."""
    name = "Infer shapes"
    try:
        inferred = onnx.shape_inference.infer_shapes(_copy_without_weights(doc), data_prop=True)
    except Exception as exc:  # noqa: BLE001
        return PassPlan(name, [], None, [f"shape inference failed: {str(exc).splitlines()[0] if str(exc) else exc}"])
    added = len(inferred.graph.value_info) - len(doc.model.graph.value_info)
    if inferred.graph.SerializeToString() == doc.model.graph.SerializeToString():
        return PassPlan(name, [], None, [])
    return PassPlan(name, [f"{max(added, 0)} value type(s) recorded"], ApplyModel(inferred, name), [])
