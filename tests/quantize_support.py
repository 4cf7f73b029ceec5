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


def tiny_net(*, spike: float = 0.0, unnamed: bool = False, opset: int = 17, seed: int = 0):  # noqa: ANN201
    """A small CNN + MLP with random weights (a ModelProto, quantizes in about a second):
    x[1,3,16,16] -> conv1 -> relu1 -> conv2 -> relu2 -> gap -> flatten -> fc1 -> relu3
    -> spike (Add of a constant) -> fc2 -> y[1,10]. ``spike`` puts one value that large in
    the constant, a planted outlier that wrecks the quantization of fc2's input, so fc2 is
    the node that adds the most error. ``unnamed``: conv2 and fc1 have no name."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def w(name: str, *shape: int, scale: float = 0.3) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    spike_value = np.zeros((1, 64), np.float32)
    spike_value[0, 0] = spike
    f2 = w("F2", 64, 10)
    if spike:  # the outlier itself reaches no output: only the rounding it forces on the rest does
        arr = numpy_helper.to_array(f2).copy()
        arr[0] = 0.0
        f2 = numpy_helper.from_array(arr, "F2")
    inits = [w("W1", 8, 3, 3, 3), w("B1", 8, scale=0.1), w("W2", 8, 8, 3, 3), w("B2", 8, scale=0.1),
             w("F1", 8, 64), f2, numpy_helper.from_array(spike_value, "S")]
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], name="" if unnamed else "conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "F1"], ["h"], name="" if unnamed else "fc1"),
        helper.make_node("Relu", ["h"], ["r3"], name="relu3"),
        helper.make_node("Add", ["r3", "S"], ["s"], name="spike"),
        helper.make_node("MatMul", ["s", "F2"], ["y"], name="fc2"),
    ]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tests")
    model.ir_version = 8
    return model
