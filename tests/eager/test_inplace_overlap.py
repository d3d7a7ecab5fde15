"""In-place ops whose input lies partly over the memory they write raise PyTorch's error
(the result would depend on the order elements are written); full overlap, disjoint
views and tensors not dense in memory work as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import eager

CASES = ["a.add_(a.t())", "a.mul_(a[0])", "a += a.t()", "a.sub_(a.view(-1)[:3])",
         "b = a.view(-1); b[:8].add_(b[1:])", "b = a.view(-1); b[1:].add_(b[:8])",
         "a[1:].add_(a[:2])", "a.t().add_(a)",
         # allowed: the same elements, disjoint views, views not dense in memory
         "a.add_(a)", "a.add_(a.view(3, 3))", "a[0].add_(a[1])", "a[0].mul_(a[0])",
         "a.add_(a.reshape(9)[0])",
         "a.add_(2.0)", "a.sub_(a.flip(0))"]

_MESSAGE = "some elements of the input tensor and the written-to tensor refer to a single " \
           "memory location"


def _run(lib, code):
    a = lib.arange(9.0).reshape(3, 3)
    env = {"a": a}
    try:
        exec(code, env)  # noqa: S102 - the test's own expressions
    except RuntimeError as e:
        return "error", str(e)
    return "ok", np.array(env["a"].tolist())


@pytest.mark.parametrize("code", CASES)
def test_overlap_as_pytorch(code):
    torch = pytest.importorskip("torch")
    got, want = _run(eager, code), _run(torch, code)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert np.array_equal(got[1], want[1])
    else:
        assert _MESSAGE in got[1] and _MESSAGE in want[1]


@pytest.mark.parametrize("code", ["a[:, :2].add_(a[:, 1:])", "a.add_(a[:, :1])"])
def test_views_not_dense_in_memory_are_not_refused(code):
    """PyTorch does not check these (too hard to tell) and its result then depends on the
    order it writes elements in; eager computes from the values before the write."""
    assert _run(eager, code)[0] == "ok"


def test_partial_overlap_raises_and_leaves_the_tensor():
    a = eager.arange(9.0).reshape(3, 3)
    with pytest.raises(RuntimeError, match=_MESSAGE):
        a.add_(a.t())
    assert np.array_equal(a.numpy(), np.arange(9.0).reshape(3, 3))
