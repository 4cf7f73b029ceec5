"""Overhead of a warm child-process run against a bare onnxruntime run, ~50 MB model.

    PYTHONPATH=. python tests/benchmarks/bench_runtime.py [--repeat 30]

The model (generated here with onnx.helper): three chained 2048x2048 float32 MatMul+Add
layers with Relu, 48 MiB of weights, input [64, 2048]. Both sides run the same model file
with the same inputs, alternating, in one process run. Reported: the ratio of medians and
the ratio of best times (best-of-N, as ``timeit`` recommends: on a loaded machine the median
mostly measures scheduling of other processes). Goal: < 1.10 (the child process, transfers
and result records included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from editor.runtime import Runner

DIM, LAYERS, BATCH = 2048, 3, 64


def make_model(path: Path) -> int:
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    prev = "x"
    for i in range(LAYERS):
        w = (rng.standard_normal((DIM, DIM)) / np.sqrt(DIM)).astype(np.float32)
        b = rng.standard_normal(DIM).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [
            helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
            helper.make_node("Relu", [f"a{i}"], [f"r{i}"] if i < LAYERS - 1 else ["y"]),
        ]
        prev = f"r{i}"
    g = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", DIM])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", DIM])],
        initializer=inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, str(path))
    return path.stat().st_size


def bench(repeat: int) -> dict[str, float]:
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp50.onnx"
        size = make_model(path)
        x = np.random.default_rng(1).standard_normal((BATCH, DIM)).astype(np.float32)
        bare = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        expected = bare.run(None, {"x": x})[0]
        bare_t, ours_t = [], []
        with Runner() as runner:
            # warm: worker started, session cached
            for _ in range(3):
                res = runner.run(path, {"x": x}, backend="ort")
                assert res.ok, res.error
                bare.run(None, {"x": x})
            np.testing.assert_allclose(res.value("y"), expected, rtol=1e-5, atol=1e-5)
            for _ in range(repeat):
                t0 = time.perf_counter()
                bare.run(None, {"x": x})
                bare_t.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                res = runner.run(path, {"x": x}, backend="ort")
                ours_t.append(time.perf_counter() - t0)
                assert res.ok
        bm, om = statistics.median(bare_t), statistics.median(ours_t)
        return {
            "model_mb": size / 2**20,
            "bare_ms": bm * 1e3,
            "ours_ms": om * 1e3,
            "ratio": om / bm,
            "bare_min_ms": min(bare_t) * 1e3,
            "ours_min_ms": min(ours_t) * 1e3,
            "min_ratio": min(ours_t) / min(bare_t),
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args(argv)
    r = bench(args.repeat)
    print(
        f"model {r['model_mb']:.1f} MiB  median: bare onnxruntime {r['bare_ms']:.2f} ms, "
        f"ONNX Studio runner (warm child) {r['ours_ms']:.2f} ms, ratio {r['ratio']:.3f}; "
        f"best of {args.repeat}: {r['bare_min_ms']:.2f} ms vs {r['ours_min_ms']:.2f} ms, ratio {r['min_ratio']:.3f} "
        "(goal < 1.10)"
    )
    return 0 if r["min_ratio"] < 1.10 else 1


def test_runner_overhead_under_10_percent() -> None:
    # Best-of-N is the overhead measure (timeit's advice): on a shared 2-core machine the
    # medians mostly measure other processes; the script prints both.
    r = bench(20)
    assert r["min_ratio"] < 1.10, r


if __name__ == "__main__":
    sys.exit(main())
