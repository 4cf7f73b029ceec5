"""Every corpus model: load, save unchanged, same bytes, load again (the walk's fixed sample by
default, every model under ``--corpus=all``); every corpus tensor reads right."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from editor.io import iter_tensors, load_model, save_model, tensor_to_numpy
from tests.conftest import CORPUS, corpus_models, corpus_walk


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bits (NaN-safe, works for ml_dtypes and strings)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return np.array_equal(np.ascontiguousarray(a).reshape(-1).view(np.uint8),
                          np.ascontiguousarray(b).reshape(-1).view(np.uint8))


@pytest.mark.slow
def test_round_trip_every_corpus_model(corpus_dir: Path, tmp_path: Path) -> None:
    whole = corpus_models()
    assert len(whole) > 1900, f"corpus looks incomplete: {len(whole)} models under {corpus_dir}"
    models = corpus_walk()
    failures: list[str] = []
    out = tmp_path / "out.onnx"
    for path in models:
        try:
            original = path.read_bytes()
            loaded = load_model(path)
            assert loaded.format == "binary" and loaded.file_size == len(original)
            save_model(loaded.model, out, store=loaded.store)
            if out.read_bytes() != original:
                failures.append(f"{path}: saved bytes differ")
                continue
            again = load_model(out)
            if again.model != loaded.model:
                failures.append(f"{path}: reloaded model differs")
        except Exception as exc:  # noqa: BLE001 - collect them all, report together
            failures.append(f"{path}: {type(exc).__name__}: {exc}")
    assert not failures, f"{len(failures)} of {len(models)} failed:\n" + "\n".join(failures[:30])


@pytest.mark.slow
def test_every_corpus_tensor_reads_like_onnx(corpus_dir: Path) -> None:
    """tensor_to_numpy agrees with onnx.numpy_helper.to_array on every test-data tensor."""
    checked: dict[int, int] = {}
    failures: list[str] = []
    for pb in sorted((corpus_dir / "onnx-backend").rglob("*.pb")):
        tensor = onnx.TensorProto()
        try:
            tensor.ParseFromString(pb.read_bytes())
            want = onnx.numpy_helper.to_array(tensor)
        except Exception:  # noqa: BLE001 - a Sequence/Map/Optional proto, not a tensor
            continue
        if tensor.data_type == 0:
            continue
        try:
            got = tensor_to_numpy(tensor)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{pb}: {type(exc).__name__}: {exc}")
            continue
        if not _same(got, want):
            failures.append(f"{pb}: {got.dtype}{got.shape} != {want.dtype}{want.shape}")
        checked[tensor.data_type] = checked.get(tensor.data_type, 0) + 1
    assert not failures, "\n".join(failures[:20])
    # every element type the corpus has (float8*, int4/uint4, int2/uint2, float4e2m1, bf16 ...)
    assert len(checked) >= 24, sorted(checked)


def test_initializers_of_real_models_read_like_onnx() -> None:
    for path in sorted((CORPUS / "real").glob("*.onnx")):
        loaded = load_model(path)
        for site in iter_tensors(loaded.model):
            want = onnx.numpy_helper.to_array(site.tensor)
            assert _same(tensor_to_numpy(site.tensor, loaded.store), want), (path, site.path)
