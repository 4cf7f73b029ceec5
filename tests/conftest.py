"""Shared fixtures: where the test corpus lives, and a private home for the app's state.

The corpus sits at ``../shared/corpus`` beside the project root (developers' machines and
CI alike); ``ONNX_STUDIO_CORPUS`` overrides it.

NOTE: tests never read or write the user's real state. A recovery file left by a crashed
window once made a test block for good in the "recover unsaved work?" dialog. So before
anything of the app is imported, every XDG folder (state: recovery files; config: QSettings;
data; cache) points into one temporary folder per test process, and
``tests/editor/test_hermetic.py`` asserts it.
"""

from __future__ import annotations

import atexit
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


def corpus_models(*, backend: bool = True, real: bool = True) -> list[Path]:
    """Every ``.onnx`` file of the corpus, sorted, so test ids are stable."""
    found: list[Path] = []
    if backend:
        found += sorted((CORPUS / "onnx-backend").rglob("*.onnx"))
    if real:
        found += sorted((CORPUS / "real").glob("*.onnx"))
    return found


def real_models() -> list[Path]:
    return corpus_models(backend=False, real=True)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"test corpus not found at {CORPUS} (set ONNX_STUDIO_CORPUS)")
    return CORPUS


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001
    # whole-corpus walks take minutes on a busy 2-core machine: 10 minutes unless marked
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(600))


@pytest.fixture(scope="session")
def ray_cluster():  # noqa: ANN201
    """A real local Ray cluster for the whole test session (a few logical CPUs, no
    dashboard), shut down at the end; yields its address. Skips without Ray (the optional
    ``onnx-studio[ray]`` extra)."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=4, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
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
