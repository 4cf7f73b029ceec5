"""A run cannot outlive the editor or take the machine: the worker dies with its parent (even
when the parent is SIGKILLed), SIGTERM / SIGHUP / Ctrl+C end ``onnx-studio run`` cleanly,
memory is capped by default and an overrun says "out of memory (limit N)" in one line, and
limits given on the command line are checked."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.errors import RuntimeBackendError
from editor.runtime import Runner
from editor.runtime.limits import (
    default_memory_limit_mb,
    effective_memory_limit_mb,
    parse_memory_limit,
    parse_timeout,
    physical_memory_mb,
)
from tests.conftest import CORPUS, ROOT

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
SILERO = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def loop_model(body_nodes: list, trip: int, x_shape: list) -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), *body_nodes],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, ["d"])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, ["d"])],
    )
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["n"], value=helper.make_tensor("n", TensorProto.INT64, [], [trip])),
         helper.make_node("Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.BOOL, [], [True])),
         helper.make_node("Loop", ["n", "c", "x"], ["y"], body=body)],
        "loop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["d"])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def spinner(tmp_path_factory) -> Path:
    """Runs for hours at 100% CPU (a Loop of 2^62 tiny steps)."""
    path = tmp_path_factory.mktemp("m") / "spin.onnx"
    onnx.save(loop_model([helper.make_node("Neg", ["x_in"], ["x_out"])], 2**62, [4]), path)
    return path


@pytest.fixture(scope="module")
def doubler(tmp_path_factory) -> Path:
    """Allocates without end: each of 64 steps doubles the tensor."""
    path = tmp_path_factory.mktemp("m") / "doubler.onnx"
    onnx.save(loop_model([helper.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0)], 64, [1024]), path)
    return path


_started: list[subprocess.Popen] = []


def _die_with_the_test_process() -> None:  # in the child, before exec (Linux)
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    # Ctrl+C as a terminal gives it: a suite started as a background shell job (`make test &`,
    # nohup) hands SIGINT down ignored, and then Python never raises KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args: str, **kw) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "ONNX_STUDIO_DEBUG"}
    env["PYTHONPATH"] = str(ROOT)
    if sys.platform.startswith("linux"):
        # a test killed by its timeout (pytest-timeout ends the whole worker) must not leave
        # an endless run spinning a core for hours: the command dies with the test process,
        # and its worker with the command (the promise these tests check)
        kw.setdefault("preexec_fn", _die_with_the_test_process)
    proc = subprocess.Popen([sys.executable, "-m", "widgets", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)
    _started.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _no_run_outlives_its_test():
    """A failed assertion leaves the command running: end it (and what it started) here."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            kids = children(proc.pid) if sys.platform.startswith("linux") else []
            proc.kill()
            proc.wait(60)
            for kid in kids:
                try:
                    os.kill(kid, signal.SIGKILL)
                except OSError:
                    pass
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def cpu_seconds(pid: int) -> float:
    """CPU time ``pid`` has used (all its threads); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loaded_onnxruntime(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return "onnxruntime_pybind11_state" in f.read()
    except OSError:
        return False


def running_worker(proc: subprocess.Popen) -> int:
    """The worker of a running ``onnx-studio run`` once it is busy with the model: onnxruntime
    is loaded and the worker has spun a further half second of CPU since (the endless Loop
    runs; the session of a three-node model is made in milliseconds). A condition, not a
    fixed sleep: at load average 15 the worker took longer than the 1.5 s once waited here.
    The worker is the child that loads onnxruntime (the first child is multiprocessing's
    resource tracker)."""
    workers: list[int] = []
    assert wait_for(lambda: workers.extend(k for k in children(proc.pid) if loaded_onnxruntime(k)) or workers, 120), (
        f"no child of {proc.pid} loaded onnxruntime (children: {children(proc.pid)}, exit {proc.poll()})")
    worker = workers[0]
    start = cpu_seconds(worker)
    assert wait_for(lambda: cpu_seconds(worker) - start >= 0.5, 120), f"the worker {worker} never got busy"
    assert proc.poll() is None and alive(worker), f"the run ended early (exit {proc.poll()}) or its worker died"
    return worker


def sleeping(pid: int) -> bool:
    """Whether ``pid``'s main thread sleeps in ``time.sleep`` (the worker's 'hang' hook), not
    waiting on its request pipe."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return "nanosleep" in f.read()
    except OSError:
        return False


@linux_only
@pytest.mark.timeout(120)
def test_worker_dies_when_the_command_is_sigkilled(spinner: Path) -> None:
    proc = cli("run", str(spinner), "--random", "--backend", "ort")
    worker = running_worker(proc)
    proc.kill()
    proc.wait(60)
    assert wait_for(lambda: not alive(worker), 60), "the worker outlived a SIGKILLed parent"


@linux_only
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGHUP, 128 + signal.SIGHUP),
                                       (signal.SIGINT, 130)])
def test_signals_end_the_run_cleanly(spinner: Path, sig: int, code: int) -> None:
    proc = cli("run", str(spinner), "--random", "--backend", "ort")
    worker = running_worker(proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)  # ends as soon as it exits; generous for a busy machine
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}; stderr: {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert wait_for(lambda: not alive(worker), 60), f"the worker outlived the run ended by {signal.Signals(sig).name}"


@linux_only
@pytest.mark.timeout(120)
def test_worker_started_from_a_thread_dies_with_its_parent(tmp_path: Path) -> None:
    """A GUI starts workers from run threads (no parent-death signal there): the watchdog
    on the parent's sentinel still ends the worker when the parent is SIGKILLed."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, sys, threading, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from editor.runtime import Runner\n"
        "if __name__ == '__main__':\n"
        "    os.environ['ONNX_STUDIO_RUNTIME_TEST_HOOKS'] = '1'  # the worker's 'hang' hook\n"
        "    r = Runner()\n"
        "    t = threading.Thread(target=r.start); t.start(); t.join()\n"
        "    print(r.worker_pid, flush=True)\n"
        f"    r.run({str(SILERO)!r}, {{}}, backend='reference', debug='hang')\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker = int(proc.stdout.readline())
    # busy in the endless request, not waiting on the pipe
    assert wait_for(lambda: sleeping(worker), 120), f"the worker {worker} never took the hanging request"
    assert alive(worker) and proc.poll() is None, f"the parent ended early (exit {proc.poll()}) or the worker died"
    proc.kill()
    proc.wait(60)
    assert wait_for(lambda: not alive(worker), 60), "the worker outlived a SIGKILLed parent"


# ------------------------------------------------------------------ memory


def test_default_memory_limit_is_half_the_ram() -> None:
    total = physical_memory_mb()
    assert total and default_memory_limit_mb() == max(256, total // 2)
    assert effective_memory_limit_mb(None) == default_memory_limit_mb()
    assert effective_memory_limit_mb(0) is None
    assert effective_memory_limit_mb(2048) == 2048


def test_memory_limit_values() -> None:
    assert parse_memory_limit("8G") == 8192
    assert parse_memory_limit("512M") == 512
    assert parse_memory_limit("1.5g") == 1536
    assert parse_memory_limit("none") == 0
    for bad in ("", "lots", "8X", "-1G", "1M", "nan"):
        with pytest.raises(RuntimeBackendError):
            parse_memory_limit(bad)


@pytest.mark.timeout(120)
def test_runaway_allocation_stops_at_the_limit(doubler: Path) -> None:
    proc = cli("run", str(doubler), "--random", "--memory-limit", "1G")
    _, err = proc.communicate(timeout=100)
    assert proc.returncode == 1
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "out of memory (limit 1 GB)" in lines[0], err
    assert "Traceback" not in err


@pytest.mark.timeout(120)
def test_real_model_under_a_tight_limit_reports_memory(tmp_path: Path) -> None:
    with Runner() as runner:
        from editor.runtime import RunOptions, input_specs, make_input
        from editor.runtime.source import load_model

        model = load_model(str(SILERO))
        feeds = {s.name: make_input(s, "random", dims={}, seed=0) for s in input_specs(model)}
        result = runner.run(str(SILERO), feeds, backend="reference", options=RunOptions(memory_limit_mb=64))
        assert not result.ok and "out of memory (limit 64 MB)" in (result.error or "")
        # the limit is per run: the same worker runs the model under the default afterwards
        result = runner.run(str(SILERO), feeds, backend="ort")
        assert result.ok, result.error
        assert np.all(np.isfinite(result.value("speech_probs")))


# ------------------------------------------------------------------ time


def test_timeout_values() -> None:
    assert parse_timeout("2.5") == 2.5
    assert parse_timeout("inf") is None and parse_timeout("none") is None
    for bad in ("nan", "-1", "0", "soon", ""):
        with pytest.raises(RuntimeBackendError):
            parse_timeout(bad)


@pytest.mark.parametrize("value", ["nan", "-3", "abc"])
def test_bad_timeout_is_one_error_line(value: str) -> None:
    proc = cli("run", str(SILERO), "--random", "--timeout", value)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.strip().startswith("error: --timeout") and len(err.strip().splitlines()) == 1, err


def test_infinite_timeout_runs(tmp_path: Path) -> None:
    proc = cli("run", str(SILERO), "--random", "--timeout", "inf")
    out, err = proc.communicate(timeout=100)
    assert proc.returncode == 0, err
    assert "speech_probs" in out


def test_runner_refuses_nan_timeout() -> None:
    with Runner() as runner, pytest.raises(RuntimeBackendError, match="timeout"):
        runner.run(str(SILERO), {}, timeout=math.nan)
