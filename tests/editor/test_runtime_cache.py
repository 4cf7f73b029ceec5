"""The run worker holds what is open, not what was ever run: one revision per document, a
closed document released, a byte bound as well as a count, source bytes dropped once parsed,
and a clear refusal when a model's copy would not fit in free memory."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from editor.errors import LoadError
from editor.runtime import ModelSource, Runner
from tests.editor.test_runtime_models import chain_model

X = np.array([[1.0, -2.0, 3.0]], np.float32)


def _revision(doc: str, rev: int, scale: float = 1.5) -> ModelSource:
    model = chain_model()
    model.graph.initializer[0].float_data[:] = []
    model.graph.initializer[0].raw_data = np.array([scale, 2.0, 3.0 + rev], np.float32).tobytes()
    return ModelSource.from_bytes(model.SerializeToString(), f"{doc}:{rev}", document=doc)


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    r = Runner()
    try:
        yield r
    finally:
        r.close()


def test_new_revisions_replace_older_ones(runner: Runner) -> None:
    for rev in range(8):
        result = runner.run(_revision("doc:a", rev), {"x": X}, backend="ort")
        assert result.ok, result.error
        # every revision's own weights: the worker never answers from an older copy
        assert result.value("y")[0, 2] == -int(3 * (3.0 + rev))
    stats = runner.stats()
    assert stats["models"] == 1 and stats["sessions"] == 1
    # the bytes a model came as are dropped once it is parsed and has its session
    assert stats["source_bytes"] == 0
    # a second document keeps its own entry
    assert runner.run(_revision("doc:b", 0), {"x": X}, backend="ort").ok
    assert runner.stats()["models"] == 2
    # and the dropped bytes are not needed for a new session of a cached model
    assert runner.run(_revision("doc:b", 0), {"x": X}, backend="ort", outputs=["a", "y"]).ok


def test_release_drops_a_documents_models_without_blocking(runner: Runner) -> None:
    assert runner.run(_revision("doc:c", 0), {"x": X}, backend="ort").ok
    before = runner.stats()["models"]
    t0 = time.monotonic()
    runner.release("doc:c")
    assert time.monotonic() - t0 < 0.1  # the caller (the GUI thread) never waits for the worker
    assert runner.wait_released(5)
    assert runner.stats()["models"] == before - 1
    # released and run again: sent again in full, runs
    assert runner.run(_revision("doc:c", 0), {"x": X}, backend="ort").ok


def test_cache_is_bounded_by_bytes(runner: Runner) -> None:
    runner.cache_bytes = 1  # smaller than any model: only the one in use stays
    try:
        for doc in ("doc:d", "doc:e", "doc:f"):
            assert runner.run(_revision(doc, 0), {"x": X}, backend="ort").ok
            assert runner.stats()["models"] == 1
    finally:
        runner.cache_bytes = None


def test_model_too_big_for_free_memory_is_refused_with_a_reason(monkeypatch) -> None:
    from editor.runtime import memory, worker

    w = worker._Worker()
    monkeypatch.setattr(memory, "available_memory", lambda: 10)
    with pytest.raises(LoadError, match="not enough free memory"):
        w._model(_revision("doc:g", 0))
    assert not w.models
    monkeypatch.setattr(memory, "available_memory", lambda: None)  # unknown: no refusal
    assert w._model(_revision("doc:g", 0)) is not None


def test_memory_facts() -> None:
    from editor.runtime import memory

    total = memory.total_memory()
    assert total is None or total > 0
    assert memory.default_cache_bytes() >= memory.CACHE_FLOOR
    rss = memory.rss_bytes()
    assert rss is None or rss > 0
    memory.trim()  # never raises, wherever it runs
