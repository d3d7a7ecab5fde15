"""``col2im`` (the adjoint of ``im2col``: convolution and pooling backward) against the
plain definition, over 1-, 2- and 3-D windows that tile, overlap, skip, dilate, pad and
crop: the fast layouts must add exactly the same numbers in the same order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from eager.ops.window import Col2im, Im2col, _check_windows, _extent, _shift, prod


def col2im_reference(cols, size, kernel, dilation, padding, stride):
    counts = _check_windows("col2im", size, kernel, dilation, padding, stride)
    n, ck, _ = cols.shape
    c = ck // prod(kernel)
    extent = tuple(_extent(*a) for a in zip(counts, kernel, dilation, stride))
    full = np.zeros((n, c) + extent, dtype=cols.dtype)
    blocks = cols.reshape((n, c) + tuple(kernel) + counts)
    head = (slice(None), slice(None))
    for off in itertools.product(*(range(k) for k in kernel)):
        dst = tuple(slice(o * d, o * d + (m - 1) * s + 1, s)
                    for o, d, m, s in zip(off, dilation, counts, stride))
        full[head + dst] += blocks[head + off]
    return _shift(full, tuple(-p[0] for p in padding), tuple(size), 0)


CASES = [
    # size, kernel, dilation, padding, stride
    ((8, 8), (2, 2), (1, 1), ((0, 0), (0, 0)), (2, 2)),      # pooling: windows tile
    ((9, 7), (2, 2), (1, 1), ((0, 0), (0, 0)), (2, 2)),      # tiles, last row/col unused
    ((6, 6), (3, 3), (1, 1), ((1, 1), (1, 1)), (3, 3)),      # tiles the padded input
    ((4, 4), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),      # convolution: overlap
    ((7, 5), (3, 2), (2, 1), ((2, 0), (1, 1)), (1, 2)),      # dilated, uneven
    ((10, 9), (2, 3), (1, 1), ((0, 0), (0, 0)), (3, 4)),     # stride > kernel: gaps
    ((6, 6), (3, 3), (1, 1), ((-1, 0), (0, -1)), (1, 1)),    # negative padding: crop
    ((11,), (3,), (2,), ((1, 2),), (2,)),                    # 1-D
    ((12,), (4,), (1,), ((0, 0),), (4,)),                    # 1-D tiles
    ((4, 5, 6), (2, 2, 3), (1, 1, 1), ((0, 0), (1, 1), (0, 1)), (2, 1, 2)),   # 3-D
    ((4, 4, 4), (2, 2, 2), (1, 1, 1), ((0, 0), (0, 0), (0, 0)), (2, 2, 2)),   # 3-D tiles
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_col2im_equals_the_definition_bitwise(case, dtype):
    size, kernel, dilation, padding, stride = case
    counts = _check_windows("col2im", size, kernel, dilation, padding, stride)
    rng = np.random.default_rng(len(size) * 7 + prod(kernel))
    n, c = 3, 2
    cols = rng.standard_normal((n, c * prod(kernel), prod(counts))).astype(dtype)
    p = dict(size=size, kernel=kernel, dilation=dilation, padding=padding, stride=stride)
    got = Col2im.forward(cols, **p)
    want = col2im_reference(cols, **p)
    assert got.shape == (n, c) + tuple(size) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # the adjoint of im2col: <im2col(x), cols> == <x, col2im(cols)>
    x = rng.standard_normal((n, c) + tuple(size))
    unf = Im2col.forward(x, kernel=kernel, dilation=dilation, padding=padding,
                         stride=stride)
    np.testing.assert_allclose(np.sum(unf * cols), np.sum(x * got), rtol=1e-5)
