"""tensor_stats over every dtype family, and the empty case."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from editor.runtime.stats import tensor_stats


def test_float_with_nan_and_inf_excluded_from_moments() -> None:
    s = tensor_stats(np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 3.0], np.float32))
    assert (s.min, s.max, s.mean) == (1.0, 3.0, 2.0)
    assert s.nan_count == 1 and s.inf_count == 2
    assert s.shape == (6,) and s.dtype == "float32" and s.size == 6


def test_empty_array_has_no_moments() -> None:
    s = tensor_stats(np.zeros((0, 3), np.float32))
    assert s.size == 0 and s.shape == (0, 3)
    assert s.min is None and s.mean is None and s.nan_count == 0


def test_all_nan() -> None:
    s = tensor_stats(np.full(4, np.nan, np.float64))
    assert s.nan_count == 4 and s.min is None


def test_bool_mean_is_fraction_true() -> None:
    s = tensor_stats(np.array([True, False, True, True]))
    assert s.min is False and s.max is True and s.mean == 0.75


def test_ints_exact_min_max() -> None:
    big = np.array([2**62, -(2**62), 5], np.int64)
    s = tensor_stats(big)
    assert s.min == -(2**62) and s.max == 2**62 and isinstance(s.min, int)


def test_strings_count_unique() -> None:
    s = tensor_stats(np.array(["a", "b", "a"], dtype=object))
    assert s.unique_count == 2 and s.min is None and s.dtype == "object"
    assert tensor_stats(np.array(["x", "y"])).dtype == "str"


@pytest.mark.parametrize(
    "dtype", [np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz]
)
def test_small_floats_reduce_without_overflow(dtype: type) -> None:
    arr = np.array([1.0, 2.0, 4.0, 8.0], np.float32).astype(dtype)
    s = tensor_stats(arr)
    assert s.min == 1.0 and s.max == 8.0 and math.isclose(s.mean, 3.75)


def test_float16_large_values_mean_does_not_overflow() -> None:
    arr = np.full(1000, 60000.0, np.float16)
    assert tensor_stats(arr).mean == pytest.approx(60000.0, rel=1e-3)


def test_int4_from_ml_dtypes() -> None:
    arr = np.array([-8, 7, 0], dtype=ml_dtypes.int4)
    s = tensor_stats(arr)
    assert (s.min, s.max) == (-8, 7)


def test_complex_uses_magnitude() -> None:
    s = tensor_stats(np.array([3 + 4j, 0j], np.complex64))
    assert s.max == 5.0 and s.min == 0.0


def test_to_dict_is_json_friendly() -> None:
    import json

    json.dumps(tensor_stats(np.ones((2, 2), np.float32)).to_dict())


def test_chunked_statistics_equal_a_whole_array_reduction() -> None:
    import editor.runtime.stats as st

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(3 * st.CHUNK + 17) * 3 + 1).astype(np.float32)
    x[[5, st.CHUNK + 3]] = np.nan
    x[2 * st.CHUNK] = np.inf
    s = tensor_stats(x)
    finite = x[np.isfinite(x)].astype(np.float64)
    assert s.nan_count == 2 and s.inf_count == 1
    assert s.min == float(finite.min()) and s.max == float(finite.max())
    assert abs(s.mean - finite.mean()) < 1e-9 and abs(s.std - finite.std()) < 1e-9
    ints = rng.integers(-100, 100, 2 * st.CHUNK + 5).astype(np.int8)
    si = tensor_stats(ints)
    assert (si.min, si.max) == (int(ints.min()), int(ints.max())) and abs(si.std - ints.astype(float).std()) < 1e-9


def test_statistics_of_a_big_tensor_make_no_full_size_copy() -> None:
    import tracemalloc

    x = np.ones(16 * 1024 * 1024, np.float32)  # 64 MB
    tracemalloc.start()
    try:
        tensor_stats(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB for a 64 MiB tensor"
