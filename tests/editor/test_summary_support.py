"""Builders and an independent reference for the summary/weights/CLI tests (defines no tests).

``reference_info`` recomputes what ``onnx-studio info --json`` must report with nothing but
the ``onnx`` package (its own recursive walk, its own dtype table), so the tests compare two
independent computations rather than the code with itself.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]

#: A model with two overloads of one local function (a Constant inside the first).
FUNCTION_MODEL = """
<ir_version: 10, opset_import: ["" : 18, "custom" : 1], producer_name: "hand", producer_version: "0.1">
main (float[N] x) => (float[N] y) {
    a = custom.Double(x)
    y = custom.Double:v2(a)
}
<domain: "custom", opset_import: ["" : 18]>
Double (t) => (u) {
    two = Constant<value_float = 2.0>()
    u = Mul(t, two)
}
<domain: "custom", overload: "v2", opset_import: ["" : 18]>
Double (t) => (u) {
    u = Add(t, t)
}
"""

# Bits per element, written out by hand from the ONNX spec (independent of editor.io).
_BITS = {
    "FLOAT": 32, "UINT8": 8, "INT8": 8, "UINT16": 16, "INT16": 16, "INT32": 32, "INT64": 64,
    "BOOL": 8, "FLOAT16": 16, "DOUBLE": 64, "UINT32": 32, "UINT64": 64, "COMPLEX64": 64,
    "COMPLEX128": 128, "BFLOAT16": 16, "FLOAT8E4M3FN": 8, "FLOAT8E4M3FNUZ": 8, "FLOAT8E5M2": 8,
    "FLOAT8E5M2FNUZ": 8, "UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4, "FLOAT8E8M0": 8, "UINT2": 2, "INT2": 2,
}
_LABEL = {"FLOAT": "float32", "DOUBLE": "float64"}


def label(elem_type: int) -> str:
    name = TensorProto.DataType.Name(elem_type)
    return _LABEL.get(name, name.lower())


def tensor_bytes(t: TensorProto) -> int:
    if t.data_type == TensorProto.STRING:
        return sum(len(s) for s in t.string_data)
    return math.ceil(math.prod(t.dims) * _BITS[TensorProto.DataType.Name(t.data_type)] / 8)


def _subgraphs(node: onnx.NodeProto):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _graphs(g: onnx.GraphProto):
    yield g
    for n in g.node:
        for sub in _subgraphs(n):
            yield from _graphs(sub)


def _dims(tp: onnx.TypeProto):
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    out = []
    for d in tp.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None)
    return out


def _value(vi: onnx.ValueInfoProto) -> dict:
    tp = vi.type
    if tp.WhichOneof("value") == "tensor_type":
        elem = label(tp.tensor_type.elem_type)
    else:
        elem = None  # non-tensor: only checked to be a string
    return {"name": vi.name, "elem_type": elem, "shape": _dims(tp)}


def reference_info(path: Path) -> dict:
    m = onnx.load(str(path), load_external_data=False)
    graphs = list(_graphs(m.graph))
    ops: Counter[str] = Counter()
    for g in graphs:
        for n in g.node:
            ops[n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"] += 1
    weight_bytes = 0
    for g in graphs:
        weight_bytes += sum(tensor_bytes(t) for t in g.initializer)
        weight_bytes += sum(tensor_bytes(s.values) + tensor_bytes(s.indices) for s in g.sparse_initializer)
    constants = [n for g in graphs for n in g.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]
    return {
        "ir_version": m.ir_version,
        "producer_name": m.producer_name,
        "opset_imports": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "inputs": [_value(v) for v in m.graph.input],
        "outputs": [_value(v) for v in m.graph.output],
        "nodes": len(m.graph.node),
        "nodes_total": sum(len(g.node) for g in graphs),
        "initializers": sum(len(g.initializer) for g in graphs),
        "weight_bytes": weight_bytes,
        "op_types": dict(ops),
        "constants": len(constants),
        "functions": [(f.domain, f.name, len(f.node)) for f in m.functions],
    }


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m editor.cli ARGS`` in a child process, with this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "ONNX_STUDIO_DEBUG"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "widgets", *args], capture_output=True, text=True, cwd=cwd or ROOT, env=env,
        timeout=120,
    )


def model_with(initializers: list[TensorProto] = (), nodes: list[onnx.NodeProto] = (), *,
               sparse: list[onnx.SparseTensorProto] = (), outputs: list[str] = ()) -> onnx.ModelProto:
    """A small model; every name in ``outputs`` becomes a graph output of undefined type."""
    g = helper.make_graph(
        list(nodes), "g", [], [helper.make_empty_tensor_value_info(n) for n in outputs],
        initializer=list(initializers), sparse_initializer=list(sparse),
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def external_model(folder: Path, arrays: dict[str, np.ndarray], *, data: str = "weights.bin",
                   name: str = "model.onnx") -> Path:
    """A model whose initializers all live in ``folder/data`` (raw, 64-byte aligned offsets)."""
    tensors = []
    blob = bytearray()
    for n, a in arrays.items():
        t = numpy_helper.from_array(a, n)
        raw = t.raw_data
        offset = -(-len(blob) // 64) * 64
        blob += bytes(offset - len(blob)) + raw
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", data), ("offset", str(offset)), ("length", str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        tensors.append(t)
    (folder / data).write_bytes(bytes(blob))
    nodes = [helper.make_node("Identity", [n], [f"o_{n}"]) for n in arrays]
    path = folder / name
    model = model_with(tensors, nodes, outputs=[f"o_{n}" for n in arrays])
    for out, a in zip(model.graph.output, arrays.values()):  # typed: a valid model, saves need one
        out.CopyFrom(helper.make_tensor_value_info(out.name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
    path.write_bytes(model.SerializeToString())
    return path


def with_external_entry(path: Path, tensor: int, **entries: str) -> None:
    """Rewrite external_data entries of initializer ``tensor`` of the model at ``path``."""
    m = onnx.load(str(path), load_external_data=False)
    t = m.graph.initializer[tensor]
    current = {e.key: e.value for e in t.external_data}
    current.update(entries)
    del t.external_data[:]
    for k, v in current.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    path.write_bytes(m.SerializeToString())
