"""The Ray backend on a real local cluster: the same results as the local runner (within
float tolerance: the host and this process may pick different thread counts and kernels), a
model shipped once, crashes and killed hosts reported (never a hang: each test's timeout
would end one), cancel and time limits, and compare/reduce fanned out with the sequential
result. Nothing here waits a fixed time: a test that needs the run under way waits until the
host's run process is busy.

The cluster is started once per test session (``ray_cluster``: ``ray.init`` with a few
logical CPUs, no dashboard) and shut down at the end; the tests skip when Ray is not
installed (it is the optional ``onnx-studio[ray]`` extra). Every test on the cluster is a
``full`` test (``make test-all``, which CI runs; tests/conftest.py marks them): the cluster
costs a tenth of ``make test``. Without a cluster the default run checks the same engine
locally (crashes, OOM, cancel and time limits in test_runtime_runner.py, the fan-out's path
in test_debug_fanout.py) and, here, addresses and the unreachable-cluster error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

ray = pytest.importorskip("ray")

from editor.runtime import Runner, RunOptions, input_specs, make_inputs  # noqa: E402
from editor.runtime.remote import ClusterConfig, RayPool, RayRunner, cluster_info  # noqa: E402
from editor.runtime.source import ModelSource  # noqa: E402
from tests.conftest import CORPUS  # noqa: E402
from tests.editor.test_runtime_models import hang_model  # noqa: E402

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"
DIV = CORPUS / "onnx-backend" / "node" / "test_div_int32_trunc" / "model.onnx"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def remote(ray_cluster: str) -> Iterator[RayRunner]:
    with RayRunner(ClusterConfig()) as r:
        yield r


@pytest.fixture(scope="module")
def local() -> Iterator[Runner]:
    with Runner() as r:
        yield r


def _feeds(path: Path) -> dict[str, np.ndarray]:
    return make_inputs(onnx.load(path), "random", dims={"seq_len": 4}, seed=1)


def _same(a, b) -> None:  # noqa: ANN001
    """The same outputs. Floats within a float32 rounding tolerance, everything else exact:
    onnxruntime on the cluster's host and in a local worker may choose different thread
    counts and kernels, and a reduction summed in another order differs in the last bits (seen:
    1.8e-7 on silero's outputs). The promise is the same result, not the same bits."""
    assert a.ok and b.ok, f"remote: {a.error}; local: {b.error}"
    # one side falling back to the reference evaluator would compare two engines, not two hosts
    assert a.backend == b.backend, (f"remote ran on {a.backend} (passed over: {a.fallback_reasons()}), "
                                    f"local on {b.backend} (passed over: {b.fallback_reasons()})")
    assert list(a.outputs) == list(b.outputs), f"remote outputs {list(a.outputs)}, local {list(b.outputs)}"
    for name in a.outputs:
        x, y = a.value(name), b.value(name)
        if np.issubdtype(np.asarray(x).dtype, np.floating):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=f"{name}: remote vs local")
        else:
            np.testing.assert_array_equal(x, y, err_msg=f"{name}: remote vs local")


def _cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and its children (a host runs models in its Runner's child)."""
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _wait_busy(pid: int, seconds: float = 0.5, timeout: float = 180.0) -> None:
    """Until the host ``pid`` (with its run process) has burnt ``seconds`` of CPU from now:
    the endless model is running (its session is made and the Loop spins), however busy the
    machine is."""
    start, deadline = _cpu_seconds(pid), time.monotonic() + timeout
    while _cpu_seconds(pid) - start < seconds:
        assert time.monotonic() < deadline, f"the run process {pid} never got busy"
        time.sleep(0.05)


def test_outputs_and_intermediates_identical_to_local(remote: RayRunner, local: Runner) -> None:
    feeds = _feeds(MAGIKA)
    _same(remote.run(str(MAGIKA), feeds), local.run(str(MAGIKA), feeds))
    from editor.runtime.intermediates import value_scopes

    scopes = value_scopes(onnx.load(MAGIKA))
    names = scopes.main[::7] + scopes.outputs
    r, lo = remote.run(str(MAGIKA), feeds, outputs=names), local.run(str(MAGIKA), feeds, outputs=names)
    _same(r, lo)
    assert {rec.role for rec in r.outputs.values()} == {"intermediate", "output"}
    assert r.detail and "on " in r.detail  # says where it ran


def test_bytes_model_is_uploaded_once_and_survives_a_new_host(ray_cluster: str, local: Runner) -> None:
    model = onnx.load(VAD)
    source = ModelSource.from_bytes(model.SerializeToString(), document="tab-1")
    feeds = _feeds(VAD)
    with RayRunner(ClusterConfig()) as r:
        for _ in range(3):
            assert r.run(source, feeds).ok
        assert r.store.uploads == 1
        pid = r.worker_pid
        r.close()  # a new host: the model is fetched from the object store, not uploaded
        again = r.run(source, feeds)
        assert again.ok and r.worker_pid != pid and r.store.uploads == 1
        _same(again, local.run(source, feeds))
        # a file the node reads in place is not uploaded at all
        assert r.run(str(VAD), feeds).ok and r.store.uploads == 1
        # a new revision of the document replaces the old upload
        edited = ModelSource.from_bytes(model.SerializeToString() + b"", key="rev-2", document="tab-1")
        assert r.run(edited, feeds).ok and r.store.uploads == 2
        assert len(r.store._refs) == 1


def test_external_data_uploaded_once_when_the_node_cannot_read_it(ray_cluster: str, tmp_path: Path,
                                                                   local: Runner) -> None:
    model = onnx.load(VAD)
    path = tmp_path / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
              size_threshold=0)
    feeds = _feeds(VAD)
    with RayRunner(ClusterConfig()) as r:
        r._node_reads = lambda _p: False  # as a node without this file system would answer
        first = r.run(str(path), feeds)
        assert first.ok, first.error
        assert r.run(str(path), feeds).ok
        assert r.store.uploads == 1 and r.store.uploaded_bytes > os.path.getsize(path)  # weights went too
        _same(first, local.run(str(path), feeds))


def _int_div_model() -> onnx.ModelProto:
    """The corpus's ``test_div_int32_trunc`` graph (one int32 Div, opset 14) on 3 elements:
    onnxruntime divides 4-element tensors with SIMD, which does not trap, but 3 elements go
    through the scalar ``idiv``, and INT_MIN / -1 raises SIGFPE there (checked: exit 136)."""
    from onnx import TensorProto, helper

    model = onnx.load(DIV)
    for vi in list(model.graph.input) + list(model.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_value = 3
    assert [n.op_type for n in model.graph.node] == ["Div"]
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.INT32
    return helper.make_model(model.graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)


def test_sigfpe_model_is_an_error_and_the_cluster_stays_usable(remote: RayRunner) -> None:
    """A valid model with an unlucky input kills the process that runs it (corpus README):
    on the cluster that is an error for that run, and the next run works."""
    model = _int_div_model()
    x, y = (vi.name for vi in model.graph.input)
    feeds = {x: np.full(3, np.iinfo(np.int32).min, np.int32), y: np.full(3, -1, np.int32)}
    crashed = remote.run(model, feeds, backend="ort")
    assert crashed.status == "crashed" and crashed.signal == "SIGFPE", crashed.error
    ok = remote.run(model, {x: np.full(3, 7, np.int32), y: np.full(3, 2, np.int32)}, backend="ort")
    assert ok.ok and (ok.value(next(iter(ok.outputs))) == 3).all()


def _in_thread(fn):  # noqa: ANN001, ANN202
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("result", fn()), daemon=True)
    thread.start()
    return thread, box


def test_killed_host_mid_run_is_reported_and_the_next_run_starts_a_new_one(ray_cluster: str) -> None:
    with RayRunner(ClusterConfig()) as r:
        r.start()
        pid = r.worker_pid
        thread, box = _in_thread(lambda: r.run(hang_model(), {"x": np.zeros(1, np.float32)}, backend="ort"))
        _wait_busy(pid)
        os.kill(pid, signal.SIGKILL)  # the host's node loses that worker (OOM killer, a crash)
        thread.join(180)
        assert not thread.is_alive(), "the run hung after its host died"
        result = box["result"]
        assert result.status == "crashed" and "died" in (result.error or ""), f"{result.status}: {result.error}"
        after = r.run(str(VAD), _feeds(VAD))
        assert after.ok and r.worker_pid != pid


def test_cancel_stops_the_run_and_keeps_the_host(remote: RayRunner) -> None:
    remote.run(str(VAD), _feeds(VAD))
    pid = remote.worker_pid
    thread, box = _in_thread(lambda: remote.run(hang_model(), {"x": np.zeros(1, np.float32)}, backend="ort"))
    _wait_busy(pid)
    assert remote.cancel()
    thread.join(180)
    assert not thread.is_alive(), "the cancelled run did not end"
    assert box["result"].status == "cancelled", box["result"].status
    again = remote.run(str(VAD), _feeds(VAD))
    assert again.ok and remote.worker_pid == pid, f"{again.status}: {again.error}; host {pid} -> {remote.worker_pid}"


def test_time_limit(remote: RayRunner) -> None:
    result = remote.run(hang_model(), {"x": np.zeros(1, np.float32)}, backend="ort", timeout=1.5)
    assert result.status == "timeout", f"{result.status}: {result.error}"
    assert remote.run(str(VAD), _feeds(VAD)).ok


def test_profile_and_providers(remote: RayRunner, local: Runner) -> None:
    result = remote.run(str(MAGIKA), _feeds(MAGIKA), backend="ort", options=RunOptions(profile=True))
    assert result.ok and result.profile and sum(t.microseconds for t in result.profile.values()) > 0
    assert set(remote.providers()) == set(local.providers())
    assert remote.run(str(MAGIKA), _feeds(MAGIKA), backend="ort",
                      options=RunOptions(providers=("CPUExecutionProvider",))).detail.startswith("CPUExecutionProvider")


def test_cluster_info_lists_the_node_and_its_onnxruntime(ray_cluster: str) -> None:
    import onnxruntime

    info = cluster_info(ClusterConfig())
    assert len(info.nodes) >= 1 and info.cpus >= 4
    node = info.nodes[0]
    assert node.onnxruntime == onnxruntime.__version__ and "CPUExecutionProvider" in node.providers
    assert "onnxruntime" in info.summary()


def test_too_many_gpus_is_one_clear_error(ray_cluster: str) -> None:
    from editor.errors import RuntimeBackendError

    with pytest.raises(RuntimeBackendError, match="GPU"):
        RayRunner(ClusterConfig(num_gpus=64)).start()


def test_compare_and_reduce_fan_out_give_the_sequential_result(ray_cluster: str, local: Runner) -> None:
    from editor.debug import NanCheck, RunSpec, compare_runs, reduce_model
    from tests.editor.test_debug import DIMS, _with_weight

    dims = {"x[2]": 48, "x[3]": 48}
    ppocr = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"
    a, b = RunSpec(ppocr, "ort"), RunSpec(ppocr, "reference")
    with RayPool(ClusterConfig(), 3) as pool:
        fanned = compare_runs(a, b, dims=dims, pool=pool.runners)
        plain = compare_runs(a, b, dims=dims, runner=local)
        assert fanned.to_json()["tensors"] == plain.to_json()["tensors"]

        def poison(w: np.ndarray) -> None:
            w.flat[3] = np.nan

        model = _with_weight("decoder.conv1d.weight", poison)
        seq = reduce_model(model, NanCheck(), dims=DIMS, runner=local, use_hints=False)
        par = reduce_model(model, NanCheck(), dims=DIMS, pool=pool.runners, use_hints=False)
        assert par.nodes == seq.nodes and par.log == seq.log
        assert par.model.SerializeToString() == seq.model.SerializeToString()


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "editor.cli", *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})})


def test_cli_run_on_the_cluster_never_prints_the_address(ray_cluster: str) -> None:
    done = _cli("run", str(MAGIKA), "--random", "--backend", "ray", "--cluster", ray_cluster, "--json")
    assert done.returncode == 0, done.stderr
    assert ray_cluster not in done.stdout + done.stderr
    import json

    assert json.loads(done.stdout)["status"] == "ok"


def test_address_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("ONNX_STUDIO_RAY_ADDRESS", "ray://head.example:10001")
    assert ClusterConfig.from_env().address == "ray://head.example:10001"
    assert ClusterConfig.from_env("auto").address == "auto"  # the flag wins


def test_cli_unreachable_cluster_is_one_error_line(tmp_path: Path) -> None:
    done = _cli("run", str(VAD), "--random", "--backend", "ray", "--cluster", "127.0.0.1:1")  # no hang: _cli's timeout
    assert done.returncode != 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and "127.0.0.1" not in done.stderr


def test_cli_through_a_ray_client_address(ray_cluster: str) -> None:
    """``ray://`` (Ray Client, what a laptop uses): a real client server in front of the
    session's cluster, started here and ended by its pid."""
    pytest.importorskip("grpc")  # the ray[client] extra
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "ray.util.client.server", "--host", "127.0.0.1", "-p", str(port),
                               "--mode", "legacy", "--address", ray_cluster],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        address = f"ray://127.0.0.1:{port}"
        done = _cli("run", str(MAGIKA), "--random", "--backend", "ray", "--cluster", address, "--json")
        assert done.returncode == 0, done.stderr
        assert address not in done.stdout + done.stderr
    finally:
        server.kill()
        server.wait(30)


def test_cancel_while_the_host_waits_for_resources(ray_cluster: str) -> None:
    """A host that cannot be placed yet (its CPUs are taken) still answers Cancel at once."""

    @ray.remote(num_cpus=1)
    class Hog:
        def ready(self) -> bool:
            return True

    hog = Hog.remote()
    ray.get(hog.ready.remote())
    try:
        total = int(ray.cluster_resources()["CPU"])
        runner = RayRunner(ClusterConfig(num_cpus=total))
        thread, box = _in_thread(lambda: runner.run(str(VAD), _feeds(VAD)))
        deadline = time.monotonic() + 180
        while not runner.cancel():  # True once the run has begun (its host waits for a placement)
            assert time.monotonic() < deadline and thread.is_alive(), "the run never began"
            time.sleep(0.05)
        thread.join(180)
        assert not thread.is_alive(), "the cancelled run did not end"
        assert box["result"].status == "cancelled", box["result"].status
    finally:
        ray.kill(hog)


def test_out_of_memory_on_the_cluster_is_an_error_for_that_run(ray_cluster: str) -> None:
    """A runaway allocation under the run's memory limit, and the OOM killer's SIGKILL, on
    the cluster node (the runtime's test hooks, passed to the host's environment)."""
    from tests.editor.test_runtime_models import chain_model

    x = {"x": np.array([[1.0, -2.0, 3.0]], np.float32)}
    with RayRunner(ClusterConfig(), env={"ONNX_STUDIO_RUNTIME_TEST_HOOKS": "1"}) as r:
        result = r.run(chain_model(), x, backend="ort", debug="oom", options=RunOptions(memory_limit_mb=2048))
        assert result.status == "failed" and "out of memory" in (result.error or "")
        killed = r.run(chain_model(), x, backend="ort", debug="sigkill")
        assert killed.status == "crashed" and "possibly out of memory" in (killed.error or "")
        assert r.run(chain_model(), x).ok
