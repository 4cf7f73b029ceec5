"""What a quantization is asked to do: one frozen record shared by the CLI, the dialog and
the ``--auto`` search, and its translation into onnxruntime's arguments.

Three modes, each one of onnxruntime's own tools (:mod:`onnxruntime.quantization`):

* ``static``: ``quantize_static``, activations calibrated on data; QDQ (QuantizeLinear /
  DequantizeLinear around float ops, what onnxruntime's CPU kernels fuse) by default,
  QOperator (QLinearConv ...) on request;
* ``dynamic``: ``quantize_dynamic``, weights int8 ahead of time, activations at run time
  (MatMulInteger, ConvInteger, DynamicQuantizeLinear): no calibration;
* ``int4``: weight-only ``MatMulNBitsQuantizer`` (MatMul -> MatMulNBits, blocks of
  ``block_size`` weights sharing a scale, symmetric or with a zero point): no calibration.

Defaults follow onnxruntime's guidance for CPUs: uint8 activations with int8 weights
(QDQ "U8S8"), weights per channel where the op allows. ``exclude_nodes`` / ``exclude_ops``
stay in float; the removable activations (Relu, Clip) are kept in the graph
(``QDQKeepRemovableActivations``) so every node of the float model keeps its
counterpart and the sensitivity view can name it; onnxruntime fuses them when it loads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from editor.errors import CommandError

__all__ = ["ACTIVATION_TYPES", "FORMATS", "METHODS", "MODES", "WEIGHT_TYPES", "QuantizeOptions"]

MODES = ("static", "dynamic", "int4")
FORMATS = ("qdq", "qoperator")
METHODS = ("minmax", "entropy", "percentile")
#: onnxruntime's QuantType members by the names users type
ACTIVATION_TYPES = {"uint8": "QUInt8", "int8": "QInt8", "uint16": "QUInt16", "int16": "QInt16"}
WEIGHT_TYPES = {"int8": "QInt8", "uint8": "QUInt8", "int16": "QInt16", "uint16": "QUInt16"}


@dataclass(frozen=True)
class QuantizeOptions:
    """One quantization request (module docstring); :meth:`checked` refuses nonsense."""

    mode: str = "static"
    format: str = "qdq"
    per_channel: bool = True
    activation_type: str = "uint8"
    weight_type: str = "int8"
    method: str = "minmax"
    #: the percentile calibration keeps (method 'percentile')
    percentile: float = 99.999
    #: 7-bit weights, for CPUs without VNNI (onnxruntime's advice)
    reduce_range: bool = False
    #: node names and op types that stay in float
    exclude_nodes: tuple[str, ...] = ()
    exclude_ops: tuple[str, ...] = ()
    #: int4: weights per block of this many along K, symmetric or with a zero point
    block_size: int = 32
    symmetric: bool = False
    #: int4: MatMulNBits' accuracy_level (None: onnxruntime's default)
    accuracy_level: int | None = None
    #: onnxruntime's quant_pre_process first (shape inference, constant folding, BatchNorm
    #: folded into Conv): weights held in Constant nodes become initializers it can quantize
    preprocess: bool = True
    #: static QDQ: activation tensors (of the prepared model) quantized at 16 bits, the
    #: activation type's wider sibling (onnxruntime's TensorQuantOverrides): what ``--auto``
    #: keeps precise without taking a Conv/MatMul out of int8 (:mod:`editor.quantize.wide`)
    wide_tensors: tuple[str, ...] = ()
    #: static QDQ: short names for the Q/DQ nodes and tensors onnxruntime adds, equal scales
    #: shared (:mod:`editor.quantize.names`); the user's names stay
    short_names: bool = True
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def checked(self) -> QuantizeOptions:
        for what, value, known in (("mode", self.mode, MODES), ("format", self.format, FORMATS),
                                   ("calibration method", self.method, METHODS),
                                   ("activation type", self.activation_type, ACTIVATION_TYPES),
                                   ("weight type", self.weight_type, WEIGHT_TYPES)):
            if value not in known:
                raise CommandError(f"unknown {what} {value!r} (choose {', '.join(known)})")
        if self.mode == "int4" and (self.block_size < 16 or self.block_size & (self.block_size - 1)):
            raise CommandError(f"block size {self.block_size}: give a power of two >= 16 (MatMulNBits)")
        if not 0.0 < self.percentile <= 100.0:
            raise CommandError(f"percentile {self.percentile:g}: give a number in (0, 100]")
        if self.wide_tensors and (self.mode != "static" or self.format != "qdq"):
            raise CommandError("16-bit activation tensors are a static QDQ option")
        if self.mode == "dynamic" and self.weight_type not in ("int8", "uint8"):
            raise CommandError(f"dynamic quantization takes int8 or uint8 weights, not {self.weight_type}")
        return self

    @property
    def calibrated(self) -> bool:
        """Whether this mode needs calibration data (static only)."""
        return self.mode == "static"

    def excluding(self, nodes: Iterable[str] = (), ops: Iterable[str] = ()) -> QuantizeOptions:
        """The same request with more nodes / op types kept in float."""
        return replace(self, exclude_nodes=tuple(dict.fromkeys([*self.exclude_nodes, *nodes])),
                       exclude_ops=tuple(dict.fromkeys([*self.exclude_ops, *ops])))

    def widening(self, tensors: Iterable[str]) -> QuantizeOptions:
        """The same request with more activation tensors at 16 bits."""
        return replace(self, wide_tensors=tuple(dict.fromkeys([*self.wide_tensors, *tensors])))

    def describe(self) -> str:
        """'static int8 (QDQ, uint8 activations, per-channel, minmax)', for labels and reports."""
        if self.mode == "int4":
            return (f"weight-only int4 (MatMulNBits, block {self.block_size}, "
                    f"{'symmetric' if self.symmetric else 'asymmetric'})")
        chan = "per-channel" if self.per_channel else "per-tensor"
        if self.mode == "dynamic":
            return f"dynamic {self.weight_type} ({chan})"
        method = f"percentile {self.percentile:g}" if self.method == "percentile" else self.method
        wide = f", {len(self.wide_tensors)} tensor(s) at 16 bits" if self.wide_tensors else ""
        return (f"static {self.weight_type} ({self.format.upper() if self.format == 'qdq' else 'QOperator'}, "
                f"{self.activation_type} activations{wide}, {chan}, {method})")

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "format": self.format, "per_channel": self.per_channel,
                "activation_type": self.activation_type, "weight_type": self.weight_type,
                "method": self.method, "percentile": self.percentile, "reduce_range": self.reduce_range,
                "exclude_nodes": list(self.exclude_nodes), "exclude_ops": list(self.exclude_ops),
                "block_size": self.block_size, "symmetric": self.symmetric, "preprocess": self.preprocess,
                "short_names": self.short_names, "wide_tensors": list(self.wide_tensors)}
