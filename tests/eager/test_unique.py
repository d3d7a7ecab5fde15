"""unique on the CPU: NumPy's ``unique`` (``equal_nan=False``) through a stable argsort,
so that the inverse of the NaNs and the zero kept of 0.0/-0.0 do not depend on NumPy's
quicksort, which is an unstable SIMD sort on some CPUs (it gave, for the array below,
NaN inverses out of input order and -0.0 for a 0.0 first in the input)."""

from __future__ import annotations

import numpy as np

import eager

NAN = float("nan")


def test_unique_nans_in_input_order_and_first_zero_kept():
    a = np.array([NAN, 1, NAN, 0.0, -0.0, NAN] + list(range(2, 24)) + [-0.0, NAN], np.float32)
    values, inverse, counts = eager.unique(eager.tensor(a), return_inverse=True,
                                           return_counts=True)
    inverse = inverse.numpy()
    np.testing.assert_array_equal(inverse[np.isnan(a)], [24, 25, 26, 27])
    assert not np.signbit(values.numpy()[0]) and counts.numpy()[0] == 3
    want, want_inv, want_counts = np.unique(a, return_inverse=True, return_counts=True,
                                            equal_nan=False)
    np.testing.assert_array_equal(values.numpy(), want)        # NaN == NaN here
    np.testing.assert_array_equal(inverse[~np.isnan(a)], want_inv[~np.isnan(a)])
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    assert values.dtype == eager.float32 and inverse.dtype == np.int64


def test_unique_matches_numpy_on_ints_bools_and_empty():
    for a in [np.random.default_rng(0).integers(-5, 6, (4, 7)), np.array([True, False, True]),
              np.zeros((0, 3), np.float64)]:
        v, i, c = eager.unique(eager.tensor(a), return_inverse=True, return_counts=True)
        w, j, d = np.unique(a, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(v.numpy(), w)
        np.testing.assert_array_equal(i.numpy(), j.reshape(a.shape))
        np.testing.assert_array_equal(c.numpy(), d)
        assert v.numpy().dtype == a.dtype and i.shape == a.shape
