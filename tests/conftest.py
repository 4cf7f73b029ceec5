"""Shared fixtures: where the test corpus lives.

The corpus sits at ``../shared/corpus`` beside the project root (developers' machines and
CI alike); ``ONNX_STUDIO_CORPUS`` overrides it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
