"""Values move once: big results come back mapped from nameless shared files, small ones
through the pipe, ``run --save`` names the worker's file instead of writing it again, and
nothing is ever left behind in /dev/shm or the temp folder — after a run, a cancelled run,
a crashed worker or a SIGKILLed parent — nor open in the editor once a result is dropped."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from editor.runtime import Runner
from editor.runtime.shared_values import can_share
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and can_share()),
                                reason="reads /proc; descriptors pass on POSIX")
HOOKS = "ONNX_STUDIO_RUNTIME_TEST_HOOKS"
ROWS = 512  # 512 x 1024 float32 = 2 MiB: above the spill size these tests set, fast to run
#: the workers these tests start share values from 1 MiB on (32 MiB by default: small
#: tensors are cheaper through the pipe), so that small models exercise the shared path
SPILL = 1 << 20


@pytest.fixture(autouse=True, scope="module")
def _spill_from_one_mib():
    old = os.environ.get("ONNX_STUDIO_SPILL_MIN_BYTES")
    os.environ["ONNX_STUDIO_SPILL_MIN_BYTES"] = str(SPILL)
    yield
    if old is None:
        del os.environ["ONNX_STUDIO_SPILL_MIN_BYTES"]
    else:
        os.environ["ONNX_STUDIO_SPILL_MIN_BYTES"] = old


def expand_model(rows: int = ROWS) -> onnx.ModelProto:
    """x[1, 1024] -> (Expand) big[rows, 1024], and small = ReduceSum(x) (a few bytes)."""
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [rows, 1024])
    g = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["big"]), helper.make_node("ReduceSum", ["x"], ["small"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
        [helper.make_tensor_value_info("big", TensorProto.FLOAT, [rows, 1024]),
         helper.make_tensor_value_info("small", TensorProto.FLOAT, [1, 1])],
        initializer=[shape])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


X = np.arange(1024, dtype=np.float32).reshape(1, 1024)


def our_files() -> set[str]:
    """Entries of /dev/shm and the temp folder that ONNX Studio's runs could have made
    (other programs on the machine come and go there)."""
    found = set()
    for folder in {"/dev/shm", tempfile.gettempdir()}:
        if os.path.isdir(folder):
            found |= {os.path.join(folder, n) for n in os.listdir(folder) if "onnx-studio-value" in n}
    return found


def holds_values(pid: int, spill: Path | None = None) -> bool:
    """Whether process ``pid`` has a value's file open (a memfd, or a nameless file in ``spill``)."""
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return any("onnx-studio-value" in link or (spill is not None and link.startswith(str(spill))) for link in links)


def shared_mappings(pid: int | str = "self") -> list[str]:
    with open(f"/proc/{pid}/maps", encoding="ascii", errors="replace") as f:
        return [line for line in f if "onnx-studio-value" in line]


def in_shared_file(arr: np.ndarray) -> bool:
    """Whether ``arr``'s data lies in a mapped value file of this process."""
    addr = arr.ctypes.data
    for line in shared_mappings():
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= addr < hi:
            return True
    return False


def open_fds() -> Counter:
    """This process's descriptors that are value files (memfd, temp or O_TMPFILE), by target.

    Only these count: other threads of a test process (xdist, Qt, onnxruntime) open and
    close unrelated descriptors at any time, so a plain total is not a leak measure."""
    found: Counter = Counter()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor, or another thread's)
        if "onnx-studio-value" in target or target.endswith(" (deleted)"):
            found[target] += 1
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def wait_for(cond, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@pytest.fixture(scope="module")
def runner():
    with Runner() as r:
        yield r


def test_big_values_are_mapped_small_ones_piped(runner: Runner) -> None:
    result = runner.run(expand_model(), {"x": X})
    assert result.ok, result.error
    big, small = result.value("big"), result.value("small")
    assert big.nbytes >= SPILL > small.nbytes
    assert np.array_equal(big, np.broadcast_to(X, (ROWS, 1024)))
    assert float(small.reshape(-1)[0]) == float(X.sum())
    assert in_shared_file(big), "the big value should be the worker's file, mapped"
    assert not in_shared_file(small), "a small value should come through the pipe"
    stats = result.outputs["big"].stats
    assert stats is not None and stats.max == 1023.0 and stats.min == 0.0
    # a caller may write into a result (copy-on-write): the next run's value is untouched
    big[0, 0] = -1.0
    again = runner.run(expand_model(), {"x": X})
    assert again.value("big")[0, 0] == 0.0


def test_a_dropped_result_leaves_no_descriptor_and_no_mapping(runner: Runner) -> None:
    runner.run(expand_model(), {"x": X})  # warm: the session exists, the worker is up
    gc.collect()
    fds, before = open_fds(), our_files()
    for _ in range(5):
        result = runner.run(expand_model(), {"x": X})
        assert result.ok and not result.value("big").flags.owndata
        del result
    gc.collect()
    assert not open_fds() - fds, "descriptors of shared values leaked"
    assert shared_mappings() == [], "a dropped result's memory is still mapped"
    assert our_files() <= before, "a run left files in /dev/shm or the temp folder"
    pid = runner.worker_pid
    assert pid is not None
    assert not holds_values(pid), "the worker kept a value's file open after sending it"


def test_many_values_in_one_reply(runner: Runner) -> None:
    """More shared values than one descriptor message carries (and than a low fd limit)."""
    n = 230
    nodes = [helper.make_node("Expand", ["x", "shape"], [f"y{i}"]) for i in range(n)]
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [256, 1024])
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [256, 1024]) for i in range(n)],
                          initializer=[shape])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    fds = open_fds()
    result = runner.run(model, {"x": X})
    assert result.ok, result.error
    assert len(result.outputs) == n and all(np.array_equal(r.value[255], X[0]) for r in result.outputs.values())
    assert not open_fds() - fds
    del result
    gc.collect()
    assert shared_mappings() == []


def test_save_names_the_workers_file(tmp_path: Path) -> None:
    """``run --save``: the big value's .npy is the file the worker wrote (one write), the
    small one is written as before, and the folder holds nothing else."""
    model = tmp_path / "m.onnx"
    onnx.save(expand_model(), str(model))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "editor.cli", "run", str(model), "--random", "--save", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["big.npy", "inputs.npz", "small.npy"]
    x = np.load(out / "inputs.npz")["x"]
    assert np.array_equal(np.load(out / "big.npy"), np.broadcast_to(x, (ROWS, 1024)))
    assert np.load(out / "small.npy").shape == (1, 1)
    # the same through the API: the kept file links into place
    with Runner() as r:
        result = r.run(str(model), {"x": X}, spill_dir=str(out))
        assert result.ok and "big" in result.value_files and "small" not in result.value_files
        assert result.value_files["big"].link_to(out / "again.npy")
        result.close_files()
    assert np.array_equal(np.load(out / "again.npy"), result.value("big"))
    assert not [p for p in out.iterdir() if p.suffix == ".part"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["cancel", "crash"])
def test_nothing_left_when_the_run_dies_after_writing(how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The worker has written the values (hook: '-after-run'), then the run is cancelled or
    the worker is killed before they arrive: no file anywhere, no descriptor in the editor."""
    monkeypatch.setenv(HOOKS, "1")
    before, fds = our_files(), open_fds()
    spill = tmp_path / "spill"
    spill.mkdir()
    with Runner() as r:
        r.start()
        pid = r.worker_pid
        if how == "cancel":
            def cancel_when_written() -> None:
                wait_for(lambda: holds_values(pid, spill), 30)
                r.cancel()
            t = threading.Thread(target=cancel_when_written)
            t.start()
            result = r.run(expand_model(), {"x": X}, debug="hang-after-run", spill_dir=str(spill))
            t.join()
            assert result.status == "cancelled"
        else:
            result = r.run(expand_model(), {"x": X}, debug="sigkill-after-run", spill_dir=str(spill), backend="ort")
            assert result.status == "crashed"
        assert wait_for(lambda: not alive(pid), 10)
    gc.collect()
    assert list(spill.iterdir()) == []
    assert our_files() <= before
    assert not open_fds() - fds and shared_mappings() == []


@pytest.mark.timeout(120)
def test_nothing_left_when_the_parent_is_killed(tmp_path: Path) -> None:
    """The editor is SIGKILLed while the worker holds written values: the worker dies with it
    and the files, which never had names, are gone with both."""
    spill = tmp_path / "spill"
    spill.mkdir()
    model = tmp_path / "m.onnx"
    onnx.save(expand_model(), str(model))
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import numpy as np\n"
        "from editor.runtime import Runner\n"
        "if __name__ == '__main__':\n"
        f"    os.environ[{HOOKS!r}] = '1'\n"
        "    r = Runner()\n"
        "    r.start()\n"
        "    print(r.worker_pid, flush=True)\n"
        "    x = np.zeros((1, 1024), np.float32)\n"
        f"    r.run({str(model)!r}, {{'x': x}}, debug='hang-after-run', spill_dir={str(spill)!r})\n"
    )
    before = our_files()
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker = int(proc.stdout.readline())
    assert wait_for(lambda: holds_values(worker, spill), 60), "the worker never wrote the values"
    proc.kill()
    proc.wait(10)
    assert wait_for(lambda: not alive(worker), 10), "the worker outlived a SIGKILLed parent"
    assert list(spill.iterdir()) == []
    assert our_files() <= before


def test_big_tensors_inside_a_sequence(runner: Runner) -> None:
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [ROWS, 1024])
    g = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["big"]), helper.make_node("SequenceConstruct", ["big", "x"], ["seq"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)], initializer=[shape])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    result = runner.run(model, {"x": X})
    assert result.ok, result.error
    big, small = result.value("seq")
    assert in_shared_file(big) and not in_shared_file(small)
    assert np.array_equal(big[-1], X[0]) and np.array_equal(small, X)
