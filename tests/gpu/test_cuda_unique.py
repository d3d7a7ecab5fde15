"""unique on CUDA (eager/cuda/kernels_unique.py): the stable rank sort, run-start flags,
the prefix count; the CPU's values, inverse, counts, dtypes and errors exactly, without
the host fallback (``dim=None``); an integer ``dim`` stays on the host, counted."""

from __future__ import annotations

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.ops.sort import unique_flat
from tests.gpu.test_cuda_ops_coverage import check

NAN = float("nan")


def _all(x):
    return eager.unique(x, return_inverse=True, return_counts=True)


@pytest.fixture
def no_fallback():
    before = cuda_ops.FALLBACK_CALLS["unique"]
    yield
    assert cuda_ops.FALLBACK_CALLS["unique"] == before


CASES = [
    np.array([3, 1, 2, 3, 1, 1, 0], np.int64),
    np.array([[2, -1, 2], [7, -1, 0]], np.int32),
    np.array([[[1, 1], [0, 5]], [[5, 5], [1, 0]]], np.int8),
    np.array([True, False, True, True], bool),
    np.array([[1.5, -2.0, 1.5], [0.0, 3.0, -2.0]], np.float32),
    np.array([NAN, 1.0, NAN, 0.0, -0.0, 1.0, NAN], np.float64),
    np.array([[0.5, NAN], [0.5, -1.0]], np.float16),
    np.array([4, 4, 4, 4, 4], np.int16),
    np.array([], np.float32),
    np.zeros((2, 0), np.int64),
    np.array(2.5, np.float32),
]


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
def test_unique_matches_cpu_on_device(a, no_fallback):
    got = check(_all, a)
    assert all(t.is_cuda for t in got)


def test_unique_options_and_method(no_fallback):
    a = np.array([[2, 0, 2], [1, 0, 5]], np.int64)
    check(lambda x: eager.unique(x), a)
    check(lambda x: eager.unique(x, sorted=False), a)
    check(lambda x: x.unique(return_inverse=True), a)
    check(lambda x: x.unique(return_counts=True), a)
    check(lambda x: eager.unique(x.t()), a)                  # a strided view
    check(lambda x: eager.unique(x[1:]), a)                  # an offset view


def test_unique_several_chunks(no_fallback):
    a = np.random.default_rng(1).integers(-4, 5, 70).astype(np.int64)   # 3 chunks of 32
    check(_all, a)


def test_unique_bfloat16(no_fallback):
    x = eager.tensor([1.5, -1.0, 1.5, 2.0]).to(eager.bfloat16)
    v, i, c = _all(x.to("cuda"))
    w, j, d = _all(x)
    assert v.dtype == w.dtype == eager.bfloat16
    np.testing.assert_array_equal(v.cpu().float().numpy(), w.float().numpy())
    np.testing.assert_array_equal(i.cpu().numpy(), j.numpy())
    np.testing.assert_array_equal(c.cpu().numpy(), d.numpy())


def test_unique_nan_and_signed_zero_are_the_stable_sorts():
    """Every NaN distinct, in input order; of 0.0/-0.0 the first in the input is kept (the
    CPU's stable sort, not NumPy's quicksort: the same on any CPU)."""
    a = np.array([NAN, 1, NAN, 0.0, -0.0, NAN] + list(range(2, 24)) + [-0.0, NAN], np.float32)
    values, inverse, counts = unique_flat(a)
    np.testing.assert_array_equal(inverse[np.isnan(a)], [24, 25, 26, 27])
    assert not np.signbit(values[0]) and counts[0] == 3
    v, i, c = check(_all, a)
    np.testing.assert_array_equal(i.cpu().numpy(), inverse)


def test_unique_dim_runs_on_host_counted():
    a = np.array([[1, 2, 1], [0, 2, 0], [1, 2, 1]], np.int64)
    before = cuda_ops.FALLBACK_CALLS["unique"]
    check(lambda x: eager.unique(x, dim=0, return_inverse=True, return_counts=True), a)
    check(lambda x: eager.unique(x, dim=-1), a.astype(np.float16))
    check(lambda x: eager.unique(x, dim=2), a)                              # the CPU's error
    assert cuda_ops.FALLBACK_CALLS["unique"] == before + 4
