"""Quantization on the graph: int8 and int4 with onnxruntime's own tools, proven on the spot.

* :class:`QuantizeOptions`: what to do (static / dynamic / int4, formats, types, exclusions);
* calibration data: :func:`npz_calibration`, :func:`image_calibration`,
  :func:`feeds_calibration`, :func:`random_calibration` (a smoke test, said so);
* :class:`Quantizer`: a session over one float model that calibrates once and quantizes as
  often as asked (:meth:`Quantizer.quantize` -> :class:`Quantized`);
* :func:`make_proof` with a :class:`Reference`: checker, onnxruntime load and run, error
  per output on held-back inputs, size and MACs by precision (:class:`Proof`).
"""

from editor.quantize.calibration import (
    RANDOM_WARNING,
    CalibrationData,
    feeds_calibration,
    npz_calibration,
    random_calibration,
)
from editor.quantize.classify import MacShare, mac_share, quantized_nodes
from editor.quantize.engine import QuantizeCancelled, Quantized, Quantizer
from editor.quantize.images import ImageParams, image_calibration, resolve_image
from editor.quantize.options import QuantizeOptions
from editor.quantize.proof import METRICS, OutputAccuracy, Proof, Reference, checker_refusal, make_proof

__all__ = [
    "METRICS",
    "RANDOM_WARNING",
    "CalibrationData",
    "ImageParams",
    "MacShare",
    "OutputAccuracy",
    "Proof",
    "QuantizeCancelled",
    "QuantizeOptions",
    "Quantized",
    "Quantizer",
    "Reference",
    "checker_refusal",
    "feeds_calibration",
    "image_calibration",
    "mac_share",
    "make_proof",
    "npz_calibration",
    "quantized_nodes",
    "random_calibration",
    "resolve_image",
]
