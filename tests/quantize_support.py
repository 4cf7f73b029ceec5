"""Quantized variants of a corpus model, made at test time with onnxruntime.quantization.

No binary is committed: each test session quantizes the small real model it needs once
(a few seconds for Magika, 95 nodes) into a temporary folder, in every format
onnxruntime writes: ``qdq`` and ``qoperator`` (static, calibrated on a few random
inputs), ``dynamic`` (ConvInteger / MatMulInteger) and ``int4`` (MatMulNBits).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from tests.conftest import CORPUS

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
FORMATS = ("qdq", "qoperator", "dynamic", "int4")


def _calibration(model: Path):  # noqa: ANN202 - an onnxruntime CalibrationDataReader
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    specs = [(i.name, [d if isinstance(d, int) and d > 0 else 1 for d in i.shape], i.type)
             for i in session.get_inputs()]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = 2

        def get_next(self) -> dict | None:
            if not self.left:
                return None
            self.left -= 1
            rng = np.random.default_rng(self.left)
            return {name: (rng.integers(0, 256, shape).astype(np.int32) if "int32" in kind
                           else rng.integers(0, 256, shape).astype(np.int64) if "int64" in kind
                           else rng.random(shape, dtype=np.float32))
                    for name, shape, kind in specs}

    return Reader()


def quantize(model: Path, fmt: str, out: Path) -> Path:
    """Write ``model`` quantized in format ``fmt`` (see module docstring) to ``out``."""
    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fmt in ("qdq", "qoperator"):
            quantize_static(str(model), str(out), _calibration(model),
                            quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator)
        elif fmt == "dynamic":
            quantize_dynamic(str(model), str(out), weight_type=QuantType.QInt8)
        elif fmt == "int4":
            from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

            quantizer = MatMulNBitsQuantizer(onnx.load(str(model)), block_size=32, is_symmetric=True)
            quantizer.process()
            quantizer.model.save_model_to_file(str(out))
        else:
            raise ValueError(f"unknown quantization format {fmt!r}")
    return out


class QuantizedModels:
    """Quantized variants of one model, made on first use (one per format per session)."""

    def __init__(self, model: Path, folder: Path) -> None:
        self.model = model
        self.folder = folder
        self._made: dict[str, Path] = {}

    def __getitem__(self, fmt: str) -> Path:
        if fmt not in self._made:
            self._made[fmt] = quantize(self.model, fmt, self.folder / f"{self.model.stem}_{fmt}.onnx")
        return self._made[fmt]
