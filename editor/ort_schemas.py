"""onnxruntime's operator registry, made part of onnx's own schema registry.

onnxruntime ships schemas for the ops onnx does not define: its contrib ops
(``com.microsoft``, ``com.microsoft.nchwc``, ``com.ms.internal.nhwc``) and a few it registers
in the *default* domain (``SimplifiedLayerNormalization``, ``Crop`` ...). The models people
export for onnxruntime (LLM decoders from onnxruntime-genai's builder, Olive, optimum; fused
BERT and TTS graphs) use them, and onnxruntime checks every node against these schemas when
it loads a model. So do we: their inputs, outputs, type constraints, attributes and docs,
read from ``get_all_operator_schema()`` at run time, never written by hand.

NOTE: each schema is rebuilt as an ``onnx.defs.OpSchema`` and registered into onnx's
registry (``onnx.defs.register_schema``), only for ``(domain, op)`` pairs onnx does not know
at all (or at versions older than onnx's first): onnx's schemas stay first where both
exist, and every reader of ``onnx.defs`` -- the
checker, strict shape inference, our live checks, the Operator docs panel, the attribute
editors, enum attribute names, colour categories -- sees one registry. It happens once per
process, on first need (:func:`ensure_registered`; importing onnxruntime costs ~0.4 s).
A rebuilt schema has no inference function (onnxruntime's are C++ only): the shape engine's
own rules (:mod:`editor.shapes.rules_contrib`) give those ops their shapes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import onnx
from onnx import defs

__all__ = ["Registered", "ensure_registered", "runtime_file", "is_runtime_schema"]

_OS = defs.OpSchema
_lock = threading.Lock()
_done = False
#: (domain, name) -> the onnxruntime source file that defines it (its own taxonomy:
#: quantization_defs.cc, bert_defs.cc, nchwc_schema_defs.cc ...)
_FILES: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Registered:
    """What :func:`ensure_registered` added: ``(domain, name, since_version)`` rows."""

    schemas: tuple[tuple[str, str, int], ...]
    #: why onnxruntime's registry could not be read ("" when it was)
    error: str = ""


_result = Registered(())


def ensure_registered() -> Registered:
    """Register onnxruntime's schemas for the ops onnx lacks (once per process)."""
    global _done, _result
    if _done:
        return _result
    with _lock:
        if not _done:
            _result = _register()
            _done = True
    return _result


def is_runtime_schema(domain: str, name: str, since_version: int | None = None) -> bool:
    """Whether ``domain.name`` (that version of it, when given) comes from onnxruntime's
    registry, not onnx's."""
    rows = ensure_registered().schemas
    key = (_canonical(domain), name)
    return any((d, n) == key and (since_version is None or v == since_version) for d, n, v in rows)


def runtime_file(domain: str, name: str) -> str:
    """The onnxruntime source file of a registered op ('' for onnx's own ops)."""
    ensure_registered()
    return _FILES.get((_canonical(domain), name), "")


def _canonical(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def _register() -> Registered:
    # NOTE: onnx's reference evaluator builds its table of schemas when first imported and
    # refuses an op name held by two domains (onnxruntime's com.microsoft Trilu beside onnx's):
    # imported after the registration it raised on every import, so the shape engine's
    # constant folding (editor.shapes.fold) retried the import at each node (~0.1 s each) and
    # never folded. Imported first, it keeps onnx's own table.
    import onnx.reference  # noqa: F401

    try:
        from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema
    except Exception as exc:  # noqa: BLE001 - an onnxruntime build without the registry call
        return Registered((), f"onnxruntime's operator registry is not available ({exc})")
    try:
        runtime = list(get_all_operator_schema())
    except Exception as exc:  # noqa: BLE001
        return Registered((), f"onnxruntime's operator registry could not be read ({exc})")
    first: dict[tuple[str, str], int] = {}  # onnx's first version of each op it knows
    for o in defs.get_all_schemas_with_history():
        key = (_canonical(o.domain), o.name)
        first[key] = min(first.get(key, o.since_version), o.since_version)
    added: list[tuple[str, str, int]] = []
    # onnx refuses a version registered twice and wants the older ones first
    for s in sorted(runtime, key=lambda s: (s.domain, s.name, s.since_version)):
        key = (_canonical(s.domain), s.name)
        # an op onnx knows only from a later opset on (onnxruntime's LayerNormalization of
        # opset 1, which older exports use) keeps onnxruntime's versions before it
        if key in first and s.since_version >= first[key]:
            continue
        try:
            defs.register_schema(_rebuild(s))
        except Exception:  # noqa: BLE001 - a schema onnx cannot hold: the op stays unknown
            continue
        _FILES.setdefault(key, str(s.file).replace("\\", "/").rsplit("/", 1)[-1])
        added.append((key[0], s.name, int(s.since_version)))
    return Registered(tuple(added))


def _rebuild(s) -> defs.OpSchema:  # noqa: ANN001 - onnxruntime's pybind OpSchema
    inputs = [_formal(p) for p in s.inputs]
    outputs = [_formal(p) for p in s.outputs]
    _fit_arity(inputs, s.min_input)
    _fit_arity(outputs, s.min_output)
    attributes = []
    for name, a in s.attributes.items():
        default = onnx.AttributeProto.FromString(a._default_value)  # noqa: SLF001 - the only way to the default
        if default.type != onnx.AttributeProto.UNDEFINED and not a.required:
            attributes.append(_OS.Attribute(name, default, a.description))
        else:
            attributes.append(_OS.Attribute(name, _OS.AttrType(int(a.type)), a.description, required=a.required))
    constraints = [(t.type_param_str, list(t.allowed_type_strs), t.description) for t in s.type_constraints]
    return _OS(s.name, s.domain, int(s.since_version), s.doc or "", inputs=inputs, outputs=outputs,
               type_constraints=constraints, attributes=attributes)


def _formal(p) -> defs.OpSchema.FormalParameter:  # noqa: ANN001
    return _OS.FormalParameter(p.name, p.typeStr, p.description,
                               param_option=_OS.FormalParameterOption(int(p.option)),
                               is_homogeneous=bool(p.isHomogeneous))


def _fit_arity(params: list[defs.OpSchema.FormalParameter], minimum: int) -> None:
    """A variadic last parameter that onnxruntime lets be empty (EPContext's inputs): onnx
    counts one by default, so state its minimum arity."""
    if params and params[-1].option == _OS.FormalParameterOption.Variadic and minimum < len(params):
        last = params[-1]
        params[-1] = _OS.FormalParameter(last.name, last.type_str, last.description,
                                         param_option=last.option, is_homogeneous=last.is_homogeneous,
                                         min_arity=max(0, minimum - len(params) + 1))
