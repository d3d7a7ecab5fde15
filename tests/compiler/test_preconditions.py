"""compiler.guards.Preconditions: the generated fast check (``holds``) agrees with the
guard-by-guard explanation (``_tensor_failure``) whichever guard fails."""

from __future__ import annotations

import numpy as np

import eager as torch
from compiler.guards import Preconditions, memory_pattern
from compiler.refs import ArgTensor, HeldTensor


def _agree(pre, tensors):
    return pre.holds(tensors, tuple(tensors), {}) == (pre._tensor_failure(tensors) is None)


def test_generated_check_agrees_with_the_explanation_for_every_guard():
    w = torch.randn(3, 2, requires_grad=True)
    g_leaf = torch.randn(2, requires_grad=True)
    g_leaf.grad = torch.zeros(2)
    n_leaf = torch.randn(2, requires_grad=True)
    a, b = torch.randn(2), torch.randn(2)
    box = {"v": 1}
    pre = Preconditions([(w, True)], [HeldTensor(g_leaf), ArgTensor(0)], [HeldTensor(n_leaf)],
                        [("box v", lambda: box["v"], 1)], [(0, 1)],
                        memory=memory_pattern([a, a, w]))
    a.grad = torch.zeros(2)
    assert pre.holds([a, a], (a, a), {}) and pre._tensor_failure([a, a]) is None

    def mutations():
        yield lambda: setattr(w, "_data", np.zeros((2, 2), np.float32))   # shape
        yield lambda: setattr(w, "_data", np.zeros((3, 2), np.float64))   # dtype
        yield lambda: setattr(w, "requires_grad", False)
        yield lambda: setattr(g_leaf, "_grad", None)
        yield lambda: setattr(g_leaf, "_grad", torch.zeros(3))            # grad shape
        yield lambda: setattr(n_leaf, "_grad", torch.zeros(2))
        yield lambda: box.update(v=2)

    for mutate in mutations():
        saved = (w._data, w.requires_grad, g_leaf._grad, n_leaf._grad, dict(box))
        mutate()
        assert not pre.holds([a, a], (a, a), {})
        assert pre._tensor_failure([a, a]) is not None
        w._data, w.requires_grad, g_leaf._grad, n_leaf._grad = saved[:4]
        box.update(saved[4])
        assert pre.holds([a, a], (a, a), {})
    # other arguments: not the same tensor; another tensor passed twice (as traced); the
    # lifted tensor passed in
    b.grad = torch.zeros(2)
    w.grad = torch.zeros(3, 2)
    for tensors, expected in (([a, b], False), ([b, b], True), ([w, w], False)):
        assert _agree(pre, tensors)
        assert pre.holds(tensors, tuple(tensors), {}) is expected
