"""The Ray backend on a local cluster: a warm remote run against the local child-process
run (~50 MB model), and ``reduce`` on a ~1,000-node model with 4 remote hosts against the
sequential local reduce.

    PYTHONPATH=. python tests/benchmarks/bench_ray.py [--repeat 20] [--nodes 1000] [--workers 4]

Both parts start one local cluster (``ray.init(num_cpus=8)``: logical CPUs, so 4 hosts fit;
the physical cores are what the machine has). Warm run: the MLP of bench_runtime.py (three
2048x2048 MatMul+Add+Relu layers, 48 MiB of weights, input [64, 2048]), sent as *bytes*
(the editor's case for an edited document: the model goes through the object store once),
runs alternating between the two runners after one warm-up each; reported: ratio of
medians and of best times. Target: <= 1.5.

Reduce: a chain of ``--nodes`` elementwise nodes on a [64, 1024] float32 tensor with one
Sqrt of a negative value planted at 70% (NaN from there on); ``NanCheck`` without hints (a
pure bisection), the same model and inputs, the local sequential reduce (one child process)
against ``--workers`` remote hosts checking speculative bisection steps at once. The reduced
nodes must be identical; reported: wall times and their ratio (target: >= 2x faster), the
checks each made. NOTE: speculation does more checks in all; on a machine with fewer cores
than hosts the concurrent checks share those cores, which bounds what fan-out can win here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from editor.runtime import Runner  # noqa: E402
from editor.runtime.source import ModelSource  # noqa: E402
from tests.benchmarks.bench_runtime import BATCH, DIM, make_model  # noqa: E402


def warm_run(repeat: int) -> dict[str, float]:
    from editor.runtime.remote import ClusterConfig, RayRunner

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp50.onnx"
        make_model(path)
        data = path.read_bytes()
        source = ModelSource.from_bytes(data, document="bench")
        x = {"x": np.random.default_rng(1).standard_normal((BATCH, DIM)).astype(np.float32)}
        local_t, remote_t = [], []
        with Runner() as local, RayRunner(ClusterConfig()) as remote:
            t0 = time.perf_counter()
            first = remote.run(source, x)
            cold = time.perf_counter() - t0
            assert first.ok, first.error
            assert local.run(source, x).ok
            for _ in range(repeat):
                for runner, times in ((local, local_t), (remote, remote_t)):
                    t0 = time.perf_counter()
                    result = runner.run(source, x)
                    times.append(time.perf_counter() - t0)
                    assert result.ok, result.error
            assert remote.store.uploads == 1, "the model was uploaded more than once"
    return {"model_mb": len(data) / 1e6, "cold_remote_s": cold,
            "local_median_ms": statistics.median(local_t) * 1e3, "remote_median_ms": statistics.median(remote_t) * 1e3,
            "local_best_ms": min(local_t) * 1e3, "remote_best_ms": min(remote_t) * 1e3,
            "ratio_median": statistics.median(remote_t) / statistics.median(local_t),
            "ratio_best": min(remote_t) / min(local_t)}


def chain_model(n: int) -> onnx.ModelProto:
    """``n`` elementwise nodes; node ``0.7 n`` is a Sqrt of a value made negative."""
    bad = int(0.7 * n)
    nodes, prev = [], "x"
    ops = ["Relu", "Abs", "Neg", "Sigmoid"]
    inits = [numpy_helper.from_array(np.float32(1.0).reshape(()), "one")]
    for i in range(n):
        out = f"v{i}"
        if i == bad:
            nodes.append(helper.make_node("Sqrt", [prev], [out], name=f"n{i}_planted_sqrt"))
        elif i == bad - 1:
            nodes.append(helper.make_node("Sub", [prev, "one"], [out], name=f"n{i}"))  # sigmoid - 1 < 0
        else:
            op = ops[i % len(ops)] if i < bad else "Relu"
            if i == bad - 2:
                op = "Sigmoid"
            nodes.append(helper.make_node(op, [prev], [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 1024])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 1024])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def reduce_bench(n: int, workers: int) -> dict[str, float]:
    from editor.debug import NanCheck, reduce_model
    from editor.runtime.remote import ClusterConfig, RayPool

    model = chain_model(n)
    x = {"x": np.random.default_rng(2).random((64, 1024)).astype(np.float32)}
    with Runner() as local:
        t0 = time.perf_counter()
        seq = reduce_model(model, NanCheck("ort"), x, runner=local, use_hints=False)
        t_seq = time.perf_counter() - t0
    with RayPool(ClusterConfig(), workers) as pool:
        pool.start()  # host start-up is not part of the reduce
        t0 = time.perf_counter()
        par = reduce_model(model, NanCheck("ort"), x, pool=pool.runners, use_hints=False)
        t_par = time.perf_counter() - t0
    assert par.nodes == seq.nodes, (par.nodes, seq.nodes)
    return {"nodes": n, "reduced_to": len(seq.nodes), "sequential_s": t_seq, "fanned_out_s": t_par,
            "speedup": t_seq / t_par, "checks_sequential": seq.checks, "checks_fanned_out": par.checks,
            "runs_sequential": seq.runs, "runs_fanned_out": par.runs, "rounds_sequential": seq.rounds,
            "rounds_fanned_out": par.rounds, "cpu_cores": os.cpu_count() or 0}


def main(argv: list[str] | None = None) -> int:
    import ray

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--only", choices=("warm", "reduce"))
    args = parser.parse_args(argv)
    ray.init(num_cpus=8, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        if args.only in (None, "warm"):
            w = warm_run(args.repeat)
            print("warm run, %.0f MB model (bytes, uploaded once): cold remote %.2f s; local median %.1f ms, "
                  "remote median %.1f ms (x%.2f); best %.1f vs %.1f ms (x%.2f); target <= 1.5"
                  % (w["model_mb"], w["cold_remote_s"], w["local_median_ms"], w["remote_median_ms"],
                     w["ratio_median"], w["local_best_ms"], w["remote_best_ms"], w["ratio_best"]))
        if args.only in (None, "reduce"):
            r = reduce_bench(args.nodes, args.workers)
            print("reduce, %d nodes -> %d: sequential local %.1f s (%d checks in %d rounds), %d remote hosts %.1f s "
                  "(%d checks in %d rounds): x%.2f faster on %d cores; target >= 2"
                  % (r["nodes"], r["reduced_to"], r["sequential_s"], r["checks_sequential"], r["rounds_sequential"],
                     args.workers, r["fanned_out_s"], r["checks_fanned_out"], r["rounds_fanned_out"], r["speedup"],
                     r["cpu_cores"]))
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
