"""Builders shared by the ``test_io_*`` tests: small models with inline or external data.

(Named ``test_io_*`` so it stays inside the io area's files; it defines no tests.)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data


def weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "w_big": rng.standard_normal((64, 48)).astype(np.float32),  # 12,288 bytes
        "w_mid": rng.integers(-100, 100, (40, 40)).astype(np.int64),  # 12,800 bytes
        "w_half": rng.standard_normal((30, 50)).astype(np.float16),  # 3,000 bytes
        "w_small": np.arange(6, dtype=np.float32).reshape(2, 3),  # 24 bytes
    }


def make_model(arrays: dict[str, np.ndarray] | None = None, *, const: np.ndarray | None = None) -> onnx.ModelProto:
    """One Identity per initializer (and optionally a Constant node holding ``const``)."""
    arrays = weights() if arrays is None else arrays
    nodes, outputs = [], []
    for name, arr in arrays.items():
        nodes.append(helper.make_node("Identity", [name], [f"out_{name}"], name=f"id_{name}"))
        outputs.append(
            helper.make_tensor_value_info(f"out_{name}", helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape)
        )
    if const is not None:
        nodes.append(helper.make_node("Constant", [], ["c"], name="const", value=numpy_helper.from_array(const, "c")))
        outputs.append(helper.make_tensor_value_info("c", helper.np_dtype_to_tensor_dtype(const.dtype), const.shape))
    graph = helper.make_graph(
        nodes, "g", [], outputs, initializer=[numpy_helper.from_array(a, n) for n, a in arrays.items()]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def write_external(
    model: onnx.ModelProto,
    path: Path,
    *,
    one_file: bool = True,
    location: str | None = "weights.bin",
    threshold: int = 100,
) -> Path:
    """Save ``model`` with onnx's own external-data writer (the reference implementation)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())  # onnx mutates its argument
    convert_model_to_external_data(
        model, all_tensors_to_one_file=one_file, location=location if one_file else None, size_threshold=threshold
    )
    onnx.save_model(model, os.fspath(path))
    return path


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    return [t for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]


def entries(t: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}


def listing(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file below ``folder`` with (inode, size, mtime_ns): to prove nothing was written."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = os.lstat(p)
        out[str(p.relative_to(folder))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out
