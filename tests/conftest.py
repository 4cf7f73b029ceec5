"""Shared fixtures: where the test corpus lives, which part of it a walk visits, a private
home for the app's state, and a report that names the test a dead worker was running.

The corpus sits at ``../shared/corpus`` beside the project root (developers' machines and
CI alike); ``ONNX_STUDIO_CORPUS`` overrides it.

NOTE: tests never read or write the user's real state. A recovery file left by a crashed
window once made a test block for good in the "recover unsaved work?" dialog. So before
anything of the app is imported, every XDG folder (state: recovery files; config: QSettings;
data; cache) points into one temporary folder per test process, and
``tests/editor/test_hermetic.py`` asserts it.

Corpus walks: a test that checks a promise on every model (round trip, layout invariants,
conformance, ...) walks ``corpus_walk()``: a fixed sample in the default run (every real
model, a third of the ``light/`` CNNs and a tenth of the generated backend tests, chosen by a
hash of the path so it never changes between runs or machines) and the whole corpus with
``--corpus=all`` (``make test-all``, which CI runs). ``corpus_models()`` is always the whole
corpus (for parametrized tests that pick their own few models).
"""

from __future__ import annotations

import atexit
import faulthandler
import functools
import hashlib
import math
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TEST_HOME = Path(tempfile.mkdtemp(prefix="onnx-studio-tests-"))
XDG_DIRS = {
    "XDG_STATE_HOME": TEST_HOME / "state",
    "XDG_CONFIG_HOME": TEST_HOME / "config",
    "XDG_DATA_HOME": TEST_HOME / "data",
    "XDG_CACHE_HOME": TEST_HOME / "cache",
}
for _var, _path in XDG_DIRS.items():
    _path.mkdir()
    os.environ[_var] = str(_path)
atexit.register(shutil.rmtree, TEST_HOME, ignore_errors=True)
CORPUS = Path(os.environ.get("ONNX_STUDIO_CORPUS", ROOT.parent / "shared" / "corpus"))

# The share of each corpus folder a sampled walk visits: every real model, a third of the
# light/ CNNs (seconds each in the heavier walks), a tenth of the generated backend tests:
# about 200 of 1,961 models, a walk at about a tenth of the whole one's cost.
SAMPLE_SHARE = {"real": 1.0, "onnx-backend/light": 1 / 3}
SAMPLE_SHARE_OTHERS = 1 / 10
_WALK = {"whole": False}


@functools.lru_cache(maxsize=None)
def _corpus_files(folder: str, pattern: str) -> tuple[Path, ...]:
    # NOTE: walking onnx-backend/ (1,951 folders of models and test data) took 0.5-3 s per
    # call, and test modules call corpus_models() at collection in every worker: walk once
    return tuple(sorted((CORPUS / folder).rglob(pattern)))


def corpus_models(*, backend: bool = True, real: bool = True) -> list[Path]:
    """Every ``.onnx`` file of the corpus, sorted, so test ids are stable."""
    found: list[Path] = []
    if backend:
        found += _corpus_files("onnx-backend", "*.onnx")
    if real:
        found += [p for p in _corpus_files("real", "*.onnx") if p.parent == CORPUS / "real"]
    return found


def real_models() -> list[Path]:
    return corpus_models(backend=False, real=True)


def whole_walk() -> bool:
    """True under ``--corpus=all`` (``make test-all``): walks visit every model."""
    return _WALK["whole"]


def _group(rel: str) -> str:
    parts = rel.split("/")
    return parts[0] if parts[0] == "real" else "/".join(parts[:2])


@functools.lru_cache(maxsize=None)
def _sampled(group: str) -> frozenset[str]:
    """The models of one corpus folder a sampled walk visits: the ``SAMPLE_SHARE`` of them
    whose paths hash lowest (sha1 of the path inside the corpus: the same sample on every
    machine and every run, whatever the file system's order)."""
    rels = [p.relative_to(CORPUS).as_posix() for p in corpus_models()]
    members = sorted((r for r in rels if _group(r) == group), key=lambda r: hashlib.sha1(r.encode()).hexdigest())
    keep = math.ceil(len(members) * SAMPLE_SHARE.get(group, SAMPLE_SHARE_OTHERS))
    return frozenset(members[:keep])


def in_walk(path: Path) -> bool:
    """Whether a corpus walk visits the model at ``path``: always under ``--corpus=all``,
    else when it is in its folder's fixed sample."""
    if _WALK["whole"]:
        return True
    rel = Path(path).relative_to(CORPUS).as_posix()
    return rel in _sampled(_group(rel))


def corpus_walk(*, backend: bool = True, real: bool = True) -> list[Path]:
    """The models a corpus-wide walk visits, sorted: ``corpus_models()`` sampled (see the
    module's docstring), or all of them under ``--corpus=all``."""
    return [p for p in corpus_models(backend=backend, real=real) if in_walk(p)]


def walk_share(whole_count: int, walked: int, total: int) -> int:
    """A count the whole walk must reach (``whole_count`` of ``total`` models), scaled to the
    ``walked`` models a sampled walk visits: the same rate, rounded down."""
    return whole_count if walked >= total else math.floor(whole_count * walked / total)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"test corpus not found at {CORPUS} (set ONNX_STUDIO_CORPUS)")
    return CORPUS


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--corpus", choices=("sample", "all"), default="sample",
                     help="corpus walks visit a fixed sample (default) or every model (make test-all)")


def pytest_configure(config: pytest.Config) -> None:
    _WALK["whole"] = config.getoption("--corpus") == "all"
    _crash_notes_configure(config)


def pytest_report_header(config: pytest.Config) -> str:
    if _WALK["whole"]:
        return "corpus walks: every model (--corpus=all)"
    return (f"corpus walks: a fixed sample ({len(corpus_walk())} of {len(corpus_models())} models; "
            "--corpus=all for every model)")


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by marker
def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001
    # whole-corpus walks take minutes on a busy 2-core machine: 10 minutes unless marked
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(600))
        # NOTE: a local Ray cluster (GCS, raylet, workers) costs 20-40 s of CPU to start and
        # run beside the suite, a tenth of `make test` on two cores: every test on it is a
        # `full` test (make test-all, which CI runs). The default run checks the remote
        # backend's parts without a cluster: addresses, errors, the optional import, and the
        # fan-out path (test_debug_fanout.py)
        if "ray_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.full)
    # NOTE: the order decides where pytest-xdist's worksteal runs a test: the first worker
    # gets the first half of this list and runs it from the front, and an idle worker steals
    # from the back of a queue. So the tests that need one process go first: every test on
    # the Ray cluster (one cluster per run, not one per worker: starting one costs a worker
    # 10-30 s) and the `one_process` modules, whole modules at a time. Stable otherwise:
    # collection order.
    rank: dict = {}
    for item in items:
        mine = 0 if "ray_cluster" in getattr(item, "fixturenames", ()) else 1 if item.get_closest_marker("one_process") else 2
        rank[item.path] = min(mine, rank.get(item.path, 2))
    items.sort(key=lambda item: rank[item.path])


# -- a dead worker names its test ----------------------------------------------------------------
# NOTE: under pytest-xdist a worker that dies (a segfault in Qt or onnxruntime, the OOM killer,
# a hung test ended by its timeout) shows up as "node down: Not properly terminated", and
# whatever it printed on the way out is lost (a worker's own output does not reach the
# terminal). So each worker writes the test it starts, and faulthandler's dump of a fatal
# signal or a timeout, to files of its own in a folder the controller made; when a worker goes
# down the controller prints both, and the crashed test's report carries the dump.
# Timeouts on a worker use faulthandler's watchdog (a C thread: it fires even while a C call
# holds the GIL, which pytest-timeout's Python thread cannot) with the timeout pytest-timeout
# computed for the test; it dumps every thread's stack, then ends the worker.

_CONFIG: dict = {}


def _crash_notes_configure(config: pytest.Config) -> None:
    _CONFIG["config"] = config
    if getattr(config, "workerinput", None) is None:  # the controller (or a run without workers)
        folder = Path(tempfile.mkdtemp(prefix="onnx-studio-workers-"))
        config.stash[_NOTES] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)


_NOTES = pytest.StashKey[Path]()


def _worker_files(config: pytest.Config) -> tuple[Path, Path] | None:
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or not workerinput.get("crash_notes"):
        return None
    folder, name = Path(workerinput["crash_notes"]), workerinput["workerid"]
    return folder / f"{name}.current", folder / f"{name}.trace"


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # after pytest's own faulthandler set-up (pytest_configure), which this one replaces
    files = _worker_files(session.config)
    if files is not None:
        trace = open(files[1], "w")  # noqa: SIM115 - open for the worker's whole life
        session.config.stash[_TRACE] = trace
        faulthandler.enable(file=trace, all_threads=True)


_TRACE = pytest.StashKey["object"]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 - xdist's WorkerController
    folder = node.config.stash.get(_NOTES, None)
    if folder is not None:
        node.workerinput["crash_notes"] = str(folder)


def pytest_runtest_logstart(nodeid: str, location) -> None:  # noqa: ANN001, ARG001
    # on a worker: the test it runs now (written before set-up: a crash in a fixture counts)
    files = _worker_files(_CONFIG["config"])
    if files is not None:
        files[0].write_text(nodeid)


def pytest_timeout_set_timer(item: pytest.Item, settings) -> bool | None:  # noqa: ANN001
    # a mark may lengthen the ini's timeout, never shorten it: marks below five minutes were
    # written when the default was one minute, for tests that needed more
    timeout = max(settings.timeout or 0, float(item.config.getini("timeout") or 0))
    if timeout <= 0:
        return None
    trace = item.config.stash.get(_TRACE, None)
    if trace is None:  # not an xdist worker: pytest-timeout's own timer
        import pytest_timeout

        pytest_timeout.pytest_timeout_set_timer(item, settings._replace(timeout=timeout))
        return True
    faulthandler.dump_traceback_later(timeout, exit=True, file=trace)
    return True


def pytest_timeout_cancel_timer(item: pytest.Item) -> bool | None:
    if item.config.stash.get(_TRACE, None) is None:
        return None  # pytest-timeout's own
    faulthandler.cancel_dump_traceback_later()
    return True


def _worker_notes(config: pytest.Config, worker: str) -> tuple[str | None, str]:
    folder = config.stash.get(_NOTES, None)
    if folder is None:
        return None, ""
    current, trace = folder / f"{worker}.current", folder / f"{worker}.trace"
    test = current.read_text() if current.exists() else None
    dump = trace.read_text(errors="replace").strip() if trace.exists() else ""
    return test, dump[-8000:]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001
    if error is None:
        return
    worker = node.gateway.id
    test, dump = _worker_notes(node.config, worker)
    reporter = node.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    reporter.ensure_newline()
    reporter.write_line(f"[{worker}] worker died ({error}) while running: {test or 'no test started yet'}",
                        red=True, bold=True)
    reporter.write_line(f"[{worker}] its last words: " + (dump or "none (killed outright: SIGKILL, the OOM killer?)"))


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report, sched) -> None:  # noqa: ANN001, ARG001
    # xdist's report for the test a dead worker was running says only "worker 'gw0' crashed
    # while running ..."; add the worker's last words
    import re

    found = re.search(r"worker '([^']+)' crashed", str(report.longrepr))
    if found is None:
        return
    _test, dump = _worker_notes(_CONFIG["config"], found.group(1))
    report.longrepr = f"{report.longrepr}\n\nthe worker's last words:\n{dump or 'none (killed outright?)'}"


@pytest.fixture(scope="session")
def ray_cluster():  # noqa: ANN201
    """A real local Ray cluster for the whole test session (a few logical CPUs, no
    dashboard), shut down at the end; yields its address. Skips without Ray (the optional
    ``onnx-studio[ray]`` extra).

    NOTE: Ray gives its raylet a fixed 30 s to register at start-up; at load average 15 on
    two cores it missed that (every Ray test of the run then errored in set-up). A start that
    times out is shut down and tried again, three times in all."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        for attempt in range(3):
            try:
                ray.init(num_cpus=4, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
                break
            except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
                ray.shutdown()
                if attempt == 2 or "timed out during startup" not in str(exc):
                    raise
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        if started:
            ray.shutdown()


@pytest.fixture(scope="session")
def quantized_magika(tmp_path_factory):  # noqa: ANN201
    """Magika quantized in every onnxruntime format, each made on first use
    (``quantized_magika["qoperator"]``; tests/quantize_support.py)."""
    from tests.quantize_support import MAGIKA, QuantizedModels

    return QuantizedModels(MAGIKA, tmp_path_factory.mktemp("quantized"))
