"""Quantize a model with onnxruntime's own tools, calibrating once for many requests.

:class:`Quantizer` is a session over one float model and its calibration data: it prepares
the model once (:mod:`editor.quantize.prepare`), and each :meth:`Quantizer.quantize` call
turns a :class:`~editor.quantize.options.QuantizeOptions` into one call of
``quantize_static`` / ``quantize_dynamic`` / ``MatMulNBitsQuantizer`` (we write no
quantizer). The first static call runs calibration and keeps onnxruntime's calibration cache
(``calibration_cache_path``: the measured ranges of every tensor), so re-quantizing with
more nodes excluded (the window's one-step re-quantize, each probe of ``--auto``) costs a
quantizer pass, not a calibration.

Progress and Cancel: the calibration data reader reports each set as onnxruntime asks
for it and raises :class:`QuantizeCancelled` when asked to stop, which onnxruntime lets
through; the phases around it check between steps.

NOTE: runs in this process. Calibration runs onnxruntime sessions here (onnxruntime's
tools have no other way); the proof and sensitivity runs go through the child-process
:class:`~editor.runtime.Runner`.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx

from editor.errors import CommandError, StudioError
from editor.quantize.calibration import CalibrationData
from editor.quantize.classify import NEEDS_Q, quantized_nodes
from editor.quantize.names import shorten_generated_names
from editor.quantize.wide import wider
from editor.quantize.options import ACTIVATION_TYPES, WEIGHT_TYPES, QuantizeOptions
from editor.quantize.prepare import Prepared, captured_warnings, drop_unused_domains, prepare_model

if TYPE_CHECKING:
    from editor.io import ExternalDataStore

__all__ = ["Progress", "QuantizeCancelled", "Quantized", "Quantizer", "float_inputs"]

#: progress(fraction 0..1 or None when unknown, what is happening)
Progress = Callable[[float | None, str], None]


class QuantizeCancelled(StudioError):
    """The user stopped the quantization (nothing was applied)."""


@dataclass
class Quantized:
    """One quantization's result: the model, what it was asked, and what it did."""

    model: onnx.ModelProto
    options: QuantizeOptions
    #: the float model as quantized (names, opset, pre-processing): what the nodes map to
    prepared: onnx.ModelProto
    #: node of ``prepared`` -> how it is quantized now ('int8', 'int4', 'int8 (dynamic)' ...)
    quantized: dict[str, str] = field(default_factory=dict)
    #: nodes of ``prepared`` kept in float on request (those that exist)
    excluded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: seconds per phase: 'prepare', 'calibrate+quantize' (a first static call), 'quantize'
    seconds: dict[str, float] = field(default_factory=dict)
    #: serialized size of the float model, weights inline
    float_bytes: int = 0

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for k in self.quantized.values():
            kinds[k] = kinds.get(k, 0) + 1
        parts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no node"
        kept = f"; {len(self.excluded)} kept in float on request" if self.excluded else ""
        return f"{self.options.describe()}: {parts} node(s) quantized{kept}"


class _Reader:
    """onnxruntime's CalibrationDataReader over our sets, with progress and Cancel."""

    def __init__(self, model: onnx.ModelProto, sets: Sequence[dict[str, Any]], progress: Progress,
                 cancel: Callable[[], bool]) -> None:
        from editor.runtime.inputs import cast_to_declared

        self._sets = [cast_to_declared(model, s)[0] for s in sets]
        self._progress, self._cancel = progress, cancel
        self._k = 0

    def get_next(self) -> dict[str, Any] | None:
        if self._cancel():
            raise QuantizeCancelled("quantization cancelled")
        if self._k >= len(self._sets):
            return None
        self._progress(self._k / len(self._sets), f"calibrating on set {self._k + 1} of {len(self._sets)}")
        self._k += 1
        return self._sets[self._k - 1]

    def __len__(self) -> int:
        return len(self._sets)

    def rewind(self) -> None:
        self._k = 0


def _reader_class() -> type:
    from onnxruntime.quantization import CalibrationDataReader

    return type("CalibrationReader", (_Reader, CalibrationDataReader), {})


def _has_cache_option() -> bool:
    from onnxruntime.quantization import quantize_static

    return "calibration_cache_path" in inspect.signature(quantize_static).parameters


class Quantizer:
    """A quantization session over one float model (module docstring). Use as a context
    manager (its working folder is removed on close)."""

    def __init__(self, model: onnx.ModelProto, calibration: CalibrationData | None = None, *,
                 store: ExternalDataStore | None = None, progress: Progress | None = None,
                 cancel: Callable[[], bool] | None = None) -> None:
        self.model = model
        self.calibration = calibration
        self.store = store
        self.progress: Progress = progress or (lambda _f, _m: None)
        self.cancel: Callable[[], bool] = cancel or (lambda: False)
        self.folder = Path(tempfile.mkdtemp(prefix="onnx-studio-quantize-"))
        self._prepared: dict[tuple[bool, bool], Prepared] = {}
        self._count = 0
        #: calibration caches by (method, percentile, preprocess): the ranges measured once
        self._caches: dict[tuple[str, float, bool], Path] = {}

    def __enter__(self) -> Quantizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _check(self) -> None:
        if self.cancel():
            raise QuantizeCancelled("quantization cancelled")

    def prepared(self, options: QuantizeOptions) -> Prepared:
        """The float model as ``options`` quantize it (made once per kind of preparation)."""
        key = (options.preprocess, options.mode != "int4")
        if key not in self._prepared:
            sub = self.folder / f"prepared-{len(self._prepared)}"
            sub.mkdir()
            self.progress(None, "preparing the float model" + (" (onnxruntime's pre-processing)" if key[0] else ""))
            self._prepared[key] = prepare_model(self.model, sub, store=self.store, preprocess=key[0],
                                                min_opset=key[1])
        return self._prepared[key]

    def quantize(self, options: QuantizeOptions) -> Quantized:
        """One quantization with ``options`` (see the module docstring)."""
        options = options.checked()
        if options.calibrated and self.calibration is None:
            raise CommandError("static quantization needs calibration data")
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        prep = self.prepared(options)
        seconds["prepare"] = time.perf_counter() - t0
        self._check()
        notes = list(prep.notes)
        exclude = self._exclusions(prep.model, options, notes)
        self._count += 1
        out = self.folder / f"quantized-{self._count}.onnx"
        with captured_warnings(notes):
            if options.mode == "static":
                self._static(prep, options, exclude, out, seconds)
            elif options.mode == "dynamic":
                t1 = time.perf_counter()
                self.progress(None, "quantizing (dynamic)")
                self._dynamic(prep, options, exclude, out)
                seconds["quantize"] = time.perf_counter() - t1
            else:
                t1 = time.perf_counter()
                self.progress(None, "quantizing weights to int4")
                self._int4(prep, options, exclude, out)
                seconds["quantize"] = time.perf_counter() - t1
        self._check()
        model = onnx.load(str(out))
        out.unlink(missing_ok=True)
        if options.mode == "static" and options.format == "qdq" and exclude:
            float_inputs(model, set(exclude))
        drop_unused_domains(model)
        _keep_declared_value_info(model, self.model)
        if options.mode == "static" and options.format == "qdq" and options.short_names:
            shorten_generated_names(model, prep.model)
        if self.calibration is not None and self.calibration.random and options.calibrated:
            notes.insert(0, "calibrated on random inputs: a smoke test, not accuracy")
        kinds = quantized_nodes(prep.model, model)
        if not kinds:
            notes.append("no node was quantized (nothing onnxruntime quantizes, or all of it excluded)")
        return Quantized(model, options, prep.model, kinds, exclude, notes, seconds, prep.float_bytes)

    # -- onnxruntime's calls ------------------------------------------------------------
    def _exclusions(self, model: onnx.ModelProto, options: QuantizeOptions, notes: list[str]) -> list[str]:
        """Node names onnxruntime must leave in float: the named ones and every node of an
        excluded op type. Names the original model does not have are refused; names the
        pre-processing folded away are noted."""
        names = {n.name for n in model.graph.node}
        original = {n.name for n in self.model.graph.node if n.name} | set(self.prepared(options).named.values())
        unknown = [n for n in options.exclude_nodes if n not in names and n not in original]
        if unknown:
            raise CommandError(f"no node named {', '.join(map(repr, unknown[:5]))}")
        gone = [n for n in options.exclude_nodes if n not in names]
        if gone:
            notes.append(f"{len(gone)} excluded node(s) were folded away by pre-processing: {', '.join(gone[:5])}")
        ops = set(options.exclude_ops)
        unknown_ops = sorted(ops - {n.op_type for n in model.graph.node} - {n.op_type for n in self.model.graph.node})
        if unknown_ops:
            raise CommandError(f"no node of op type {', '.join(map(repr, unknown_ops))} in the model")
        exclude = [n for n in options.exclude_nodes if n in names]
        exclude += [n.name for n in model.graph.node if n.op_type in ops and n.name not in exclude]
        return exclude

    def _static(self, prep: Prepared, options: QuantizeOptions, exclude: list[str], out: Path,
                seconds: dict[str, float]) -> None:
        from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

        assert self.calibration is not None
        method = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                  "percentile": CalibrationMethod.Percentile}[options.method]
        extra: dict[str, Any] = {"QDQKeepRemovableActivations": True}
        if options.method == "percentile":
            extra["CalibPercentile"] = options.percentile
        extra.update(options.extra)
        wide = getattr(QuantType, ACTIVATION_TYPES[wider(options.activation_type)])
        if options.wide_tensors and wide != getattr(QuantType, ACTIVATION_TYPES[options.activation_type]):
            overrides = dict(extra.get("TensorQuantOverrides", {}))
            for name in options.wide_tensors:
                overrides.setdefault(name, [{"quant_type": wide}])
            extra["TensorQuantOverrides"] = overrides
        kwargs: dict[str, Any] = dict(
            quant_format=QuantFormat.QDQ if options.format == "qdq" else QuantFormat.QOperator,
            per_channel=options.per_channel, reduce_range=options.reduce_range,
            activation_type=getattr(QuantType, ACTIVATION_TYPES[options.activation_type]),
            weight_type=getattr(QuantType, WEIGHT_TYPES[options.weight_type]),
            nodes_to_exclude=exclude, calibrate_method=method, extra_options=extra)
        key = (options.method, options.percentile, options.preprocess)
        cache = self._caches.get(key)
        fresh = cache is None or not cache.is_file()
        if fresh:
            self.progress(0.0, f"calibrating on {len(self.calibration.sets)} input set(s)")
        if _has_cache_option():
            cache = cache or self.folder / f"calibration-{len(self._caches)}.json"
            kwargs["calibration_cache_path"] = str(cache)
        reader = _reader_class()(prep.model, self.calibration.sets, self.progress, self.cancel)
        t1 = time.perf_counter()
        try:
            # the percentile and entropy calibrators print their progress: not on our stdout (--json)
            with contextlib.redirect_stdout(io.StringIO()):
                quantize_static(str(prep.path), str(out), reader, **kwargs)
        except QuantizeCancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime's tools raise anything
            raise CommandError(f"onnxruntime's quantize_static refused the model: {_first(exc)}") from exc
        total = time.perf_counter() - t1
        if fresh:
            seconds["calibrate+quantize"] = total
        else:
            seconds["quantize"] = total
        if "calibration_cache_path" in kwargs:
            self._caches[key] = Path(kwargs["calibration_cache_path"])

    def _dynamic(self, prep: Prepared, options: QuantizeOptions, exclude: list[str], out: Path) -> None:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        try:
            quantize_dynamic(str(prep.path), str(out), per_channel=options.per_channel,
                             reduce_range=options.reduce_range,
                             weight_type=getattr(QuantType, WEIGHT_TYPES[options.weight_type]),
                             nodes_to_exclude=exclude, extra_options=dict(options.extra))
        except Exception as exc:  # noqa: BLE001
            raise CommandError(f"onnxruntime's quantize_dynamic refused the model: {_first(exc)}") from exc

    def _int4(self, prep: Prepared, options: QuantizeOptions, exclude: list[str], out: Path) -> None:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        model = onnx.ModelProto()
        model.CopyFrom(prep.model)
        try:
            quantizer = MatMulNBitsQuantizer(model, block_size=options.block_size, is_symmetric=options.symmetric,
                                             accuracy_level=options.accuracy_level, nodes_to_exclude=exclude)
            quantizer.process()
            quantizer.model.save_model_to_file(str(out))
        except Exception as exc:  # noqa: BLE001
            raise CommandError(f"onnxruntime's MatMulNBitsQuantizer refused the model: {_first(exc)}") from exc


def float_inputs(model: onnx.ModelProto, excluded: set[str]) -> int:
    """Let each node kept in float read its activations in float (in place); the count.

    onnxruntime's QDQ quantizer leaves an excluded node in float but still feeds it the
    quantized copy of a tensor whose producer or other readers are quantized
    (``x -> QuantizeLinear -> DequantizeLinear -> node``), so keeping a node in float would
    not remove the rounding of its inputs, which is often the very error it was kept for.
    The node is rewired to read ``x`` itself; a Q/DQ pair nothing reads any more goes.

    Except where ``x`` comes from a quantized Conv / ConvTranspose: onnxruntime fuses those
    into an integer kernel only when their output goes to QuantizeLinear alone, so reading
    ``x`` would turn the Conv's MACs back to float (the costliest part of the model) to save
    one rounding of an activation (about 1/255 of its range): the float node reads the
    Conv's int8 output, dequantized, as it would at run time.
    """
    g = model.graph
    producer = {o: n for n in g.node for o in n.output if o}
    weights = {t.name for t in g.initializer}
    rewired = 0
    for node in g.node:
        if node.name not in excluded:
            continue
        for i, name in enumerate(node.input):
            dq = producer.get(name)
            if dq is None or dq.op_type != "DequantizeLinear":
                continue
            q = producer.get(dq.input[0])
            if q is None or q.op_type != "QuantizeLinear" or q.input[0] in weights:
                continue
            source = producer.get(q.input[0])
            if source is not None and source.op_type in NEEDS_Q and source.name not in excluded:
                continue
            node.input[i] = q.input[0]
            rewired += 1
    if rewired:
        _drop_unread(g)
    return rewired


def _keep_declared_value_info(model: onnx.ModelProto, original: onnx.ModelProto) -> int:
    """Drop the value_info the pre-processing's shape inference added (in place); the count.

    onnxruntime infers every shape when it loads the model, and so does the editor, so
    those records only weigh: 24 KB of the 0.6 MB direction classifier's 0.35 MB int8 file.
    What the user's model declared stays."""
    declared = {vi.name for vi in original.graph.value_info}
    keep = [vi for vi in model.graph.value_info if vi.name in declared]
    dropped = len(model.graph.value_info) - len(keep)
    if dropped:
        del model.graph.value_info[:]
        model.graph.value_info.extend(keep)
    return dropped


def _drop_unread(g: onnx.GraphProto) -> None:
    """Remove QuantizeLinear / DequantizeLinear nodes nothing reads (repeatedly)."""
    outputs = {o.name for o in g.output}
    while True:
        read = {x for n in g.node for x in n.input} | outputs
        dead = [k for k, n in enumerate(g.node) if n.op_type in ("QuantizeLinear", "DequantizeLinear")
                and not any(o in read for o in n.output)]
        if not dead:
            return
        for k in reversed(dead):
            del g.node[k]


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
