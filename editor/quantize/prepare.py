"""The float model as the quantizer gets it: weights in memory, every node named, an opset
the quantized ops need, and onnxruntime's own pre-processing.

Why each step:

* **names**: onnxruntime excludes nodes from quantization *by name*, and the sensitivity
  ranking names the nodes it ranks; an unnamed node gets ``<OpType>_<k>`` (k its position),
  so ``--exclude-nodes Conv_12`` means the same node in every run;
* **opset 13**: per-channel QuantizeLinear / DequantizeLinear take an ``axis`` from opset 13;
  onnxruntime writes it into an older model anyway and the result does not load. Older
  models go through onnx's version converter first (said in the notes);
* **pre-processing** (what ``onnxruntime.quantization.quant_pre_process`` does, on by
  default): shape inference and onnxruntime's basic graph optimizations, so weights held in
  ``Constant`` nodes (Paddle exports) become initializers the quantizer can quantize per
  channel, and BatchNormalization is folded into its Conv. Its steps are called here, from
  memory, the weights written once (:func:`_optimized`): the shapes come from our shape
  engine when it knows every one statically, else from onnxruntime's symbolic shape
  inference (:func:`_shaped_bytes`); the onnx shape inference it ends with is left to
  ``quantize_static``, which runs it again anyway. The quantized models are the same, byte
  for byte, as through quant_pre_process on the bench's six models (QDQ; QOperator and
  dynamic on three; int4 keeps the graph outputs' shapes as the model declares them, where
  its onnx shape inference wrote ``unk__`` dims). Symbolic shape inference refuses some
  models; then the optimizations run without it, and the model is quantized without
  pre-processing when they fail (both said);
* **domains**: onnxruntime's optimizer declares every domain it knows; the ones no node
  uses are dropped again (from the model in memory; the file the quantizer reads keeps
  them unless it is written again, and the quantized model drops them).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import onnx

from editor.commands.common import fresh_name
from editor.errors import CommandError, first_line
from editor.io.tensors import iter_tensors, resolve_path, uses_external_data

if TYPE_CHECKING:
    from editor.io import ExternalDataStore

__all__ = ["MIN_OPSET", "SYMBOLIC_DUMP", "Prepared", "captured_warnings", "drop_unused_domains", "inline_weights",
           "name_nodes", "no_symbolic_dump", "prepare_model"]

MIN_OPSET = 13
_PROTOBUF_LIMIT = 2_000_000_000


@dataclass
class Prepared:
    """The float model the quantizer reads, saved at ``path``, and what was done to it."""

    model: onnx.ModelProto
    path: Path
    notes: list[str] = field(default_factory=list)
    #: names given to unnamed nodes (position in the original main graph -> name)
    named: dict[int, str] = field(default_factory=dict)
    preprocessed: bool = False
    #: serialized size of the float model with its weights inline (what the result is compared to)
    float_bytes: int = 0


def inline_weights(model: onnx.ModelProto, store: ExternalDataStore | None) -> int:
    """Read every external tensor of ``model`` into it (in place); the count."""
    count = 0
    for site in list(iter_tensors(model)):
        if not uses_external_data(site.tensor):
            continue
        if store is None:
            raise CommandError(f"weight {site.tensor.name!r} is stored outside the model and its data is not open")
        tensor = resolve_path(model, site.path)
        payload = bytes(store.read_bytes(tensor))
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        tensor.raw_data = payload
        count += 1
    return count


def name_nodes(model: onnx.ModelProto) -> dict[int, str]:
    """Give each unnamed main-graph node the name ``<OpType>_<k>`` (in place); what was named."""
    taken = {n.name for n in model.graph.node if n.name}
    named: dict[int, str] = {}
    for k, node in enumerate(model.graph.node):
        if not node.name:
            node.name = fresh_name(f"{node.op_type}_{k}", taken)
            taken.add(node.name)
            named[k] = node.name
    return named


def drop_unused_domains(model: onnx.ModelProto) -> None:
    """Remove opset imports of domains no node (in any graph or function) uses."""
    used = {""}

    def walk(nodes) -> None:  # noqa: ANN001
        for n in nodes:
            used.add("" if n.domain == "ai.onnx" else n.domain)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
        used.add(f.domain)
    keep = [o for o in model.opset_import if ("" if o.domain == "ai.onnx" else o.domain) in used]
    if len(keep) != len(model.opset_import):
        del model.opset_import[:]
        model.opset_import.extend(keep)


@contextmanager
def captured_warnings(notes: list[str]) -> Iterator[None]:
    """onnxruntime's quantization tools log advice through the root logger; gather it into
    ``notes`` (once each) instead of letting it reach the terminal."""

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage().strip().splitlines()[0] if record.getMessage().strip() else ""
            if text and "pre-process" not in text and text not in notes:
                notes.append(text)

    root = logging.getLogger()
    handler = _Collect(level=logging.WARNING)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def _default_opset(model: onnx.ModelProto) -> int | None:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def _to_min_opset(model: onnx.ModelProto, notes: list[str]) -> onnx.ModelProto:
    version = _default_opset(model)
    if version is None or version >= MIN_OPSET:
        return model
    from onnx import version_converter

    try:
        converted = version_converter.convert_version(model, MIN_OPSET)
    except Exception as exc:  # noqa: BLE001 - the converter's first line is the reason
        first = first_line(exc)
        notes.append(f"the model is at opset {version} and onnx's converter cannot take it to {MIN_OPSET} ({first}): "
                     "per-channel quantization may not load; try --per-tensor")
        return model
    notes.append(f"converted from opset {version} to {MIN_OPSET} first (per-channel QuantizeLinear needs it)")
    return converted


#: what onnxruntime's symbolic shape inference writes into the current folder when it cannot
#: finish (beside it, the weights as a ``<uuid>.data`` file: 90 MB for all-MiniLM-L6-v2)
SYMBOLIC_DUMP = "sym_shape_infer_temp.onnx"


@contextmanager
def no_symbolic_dump() -> Iterator[None]:
    """Remove the model onnxruntime's symbolic shape inference dumps into the current folder
    when it gives up (:data:`SYMBOLIC_DUMP` and its external data), if it was written
    meanwhile: quantizing must not leave the user's folder 90 MB heavier per try."""
    dump = Path(SYMBOLIC_DUMP)
    before = dump.stat().st_mtime_ns if dump.is_file() else None
    try:
        yield
    finally:
        if dump.is_file() and dump.stat().st_mtime_ns != before:
            try:
                header = onnx.load(str(dump), load_external_data=False)
                data = {e.value for t in header.graph.initializer for e in t.external_data if e.key == "location"}
            except Exception:  # noqa: BLE001 - a dump we cannot read: remove the model alone
                data = set()
            for name in data:
                if Path(name).name == name:  # beside the dump, never elsewhere
                    Path(name).unlink(missing_ok=True)
            dump.unlink(missing_ok=True)


def static_shapes(model: onnx.ModelProto) -> list[onnx.ValueInfoProto] | None:
    """Every main-graph value a node makes, typed and with every dim a number, from our
    shape engine (:mod:`editor.shapes`); None when it leaves one unknown or symbolic.

    What onnxruntime's symbolic shape inference would write for a model whose shapes are
    all static, at a fraction of its cost (it imports sympy: 0.6 s; then one more copy of
    the weights on disk); on symbolic dims it is the tool for the job (its formulas are
    what onnxruntime's optimizer reads) and runs as before."""
    from editor.shapes.engine import infer_model, type_proto

    table = infer_model(model)
    out: list[onnx.ValueInfoProto] = []
    for node in model.graph.node:
        for name in node.output:
            if not name:
                continue
            vs = table.get(name)
            if not vs.elem_type or vs.dims is None or not all(isinstance(d, int) for d in vs.dims):
                return None
            info = onnx.ValueInfoProto(name=name)
            info.type.CopyFrom(type_proto(vs))
            out.append(info)
    return out


def _shaped_bytes(model: onnx.ModelProto, serialized: bytes | None, notes: list[str]) -> bytes:
    """``model`` serialized with every value's shape declared (value_info), as onnxruntime's
    optimizer is best fed: from our engine when it knows them all (:func:`static_shapes`),
    else from onnxruntime's symbolic shape inference; as it is when that refuses (said).
    ``serialized``: ``model``'s bytes when they are at hand (no second serialization)."""
    known = static_shapes(model)
    if known is not None:
        declared = {vi.name for vi in model.graph.value_info} | {o.name for o in model.graph.output}
        shapes = onnx.ModelProto()
        shapes.graph.value_info.extend(vi for vi in known if vi.name not in declared)
        # protobuf merges concatenated messages: the graph gains the value_info, the weights
        # are not copied into a second model
        return (serialized or model.SerializeToString()) + shapes.SerializeToString()
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    try:
        # quant_pre_process's own call, with its defaults
        with captured_warnings([]), no_symbolic_dump():
            return SymbolicShapeInference.infer_shapes(model, 2**31 - 1, False, False, 0).SerializeToString()
    except Exception as exc:  # noqa: BLE001 - onnxruntime's tools raise anything (AssertionError ...)
        first = first_line(exc)
        notes.append(f"pre-processing ran without symbolic shape inference, which refused the model ({first})")
        return serialized or model.SerializeToString()


def _optimized(data: bytes, opset: int, folder: Path) -> tuple[onnx.ModelProto, Path]:
    """onnxruntime's basic graph optimizations of the model ``data`` (its shapes declared),
    as its ``quant_pre_process`` runs them: a session that writes the optimized model, with
    the pre-processing's mark; that model and its file. From memory: quant_pre_process reads
    a file, and with its own shape inferences (``quantize_static`` runs onnx's again when
    it loads the model) the weights went to disk and back five more times. A model still
    below opset 11 takes quant_pre_process's own path (it replaces Upsample with Resize
    first). Raises what onnxruntime raises."""
    from onnxruntime.quantization.quant_utils import add_pre_process_metadata

    opt = folder / "preprocessed.onnx"
    if opset <= 10:
        from onnxruntime.quantization.shape_inference import quant_pre_process

        src = folder / "to-preprocess.onnx"
        src.write_bytes(data)
        with captured_warnings([]):
            quant_pre_process(str(src), str(opt), skip_symbolic_shape=True, skip_onnx_shape=True)
        src.unlink()
        return onnx.load(str(opt)), opt
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.optimized_model_filepath = str(opt)
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    model = onnx.load(str(opt))
    add_pre_process_metadata(model)
    mark = onnx.ModelProto()
    mark.metadata_props.extend(model.metadata_props[-1:])
    with opt.open("ab") as f:  # the file gets the mark by protobuf's merge, not by a second write
        f.write(mark.SerializeToString())
    return model, opt


def prepare_model(model: onnx.ModelProto, folder: Path, *, store: ExternalDataStore | None = None,
                  preprocess: bool = True, min_opset: bool = True) -> Prepared:
    """The float model the quantizer reads (module docstring), saved in ``folder``.
    ``model`` is not changed."""
    work = onnx.ModelProto()
    work.CopyFrom(model)
    notes: list[str] = []
    inlined = inline_weights(work, store)
    if inlined:
        notes.append(f"{inlined} weight(s) stored outside the model were read in")
    # serialized once here: its size is what the result is compared to, and onnxruntime's
    # optimizer reads these bytes when nothing below changes the model
    serialized: bytes | None = work.SerializeToString()
    float_bytes = len(serialized)
    if float_bytes > _PROTOBUF_LIMIT:
        raise CommandError(f"the model is {float_bytes / 1e9:.1f} GB with its weights: quantize takes models "
                           "under 2 GB (onnxruntime's tools would need external data here)")
    copy = work
    named = name_nodes(work)
    if named:
        notes.append(f"{len(named)} unnamed node(s) named <OpType>_<position> (quantize excludes nodes by name)")
    if min_opset:
        work = _to_min_opset(work, notes)
    if named or work is not copy:
        serialized = None  # not this model's bytes any more
    done = False
    raw = folder / "float.onnx"
    if preprocess:
        try:
            optimized, written = _optimized(_shaped_bytes(work, serialized, notes), _default_opset(work) or MIN_OPSET,
                                            folder)
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises anything
            first = first_line(exc)
            notes.append(f"pre-processing skipped: onnxruntime's graph optimizations refused the model ({first})")
        else:
            work, done = optimized, True
            # onnxruntime's optimizer declares every domain it knows: the model in memory drops
            # them, the file may keep them (the quantized model drops them again)
            drop_unused_domains(work)
            named_after = name_nodes(work)  # the optimizer may add nodes of its own, unnamed
            if named_after:
                notes.append(f"{len(named_after)} node(s) the pre-processing added were named")
                written.unlink()
            else:  # the optimizer's file is the model the quantizer reads: no second write
                raw = written
    if raw.name == "float.onnx":
        onnx.save(work, str(raw))
    return Prepared(work, raw, notes, named, done, float_bytes)
