"""compiler.guards.Preconditions: the generated fast check (``holds``) agrees with the
guard-by-guard explanation (``_tensor_failure``) whichever guard fails; ``same_as``
compares every guard's ident; each guard object describes itself."""

from __future__ import annotations

import warnings

import numpy as np

import eager as torch
from compiler import CompileWarning, compile
from compiler.guards import Preconditions, memory_pattern
from compiler.refs import ArgTensor, HeldTensor
from compiler.tensor_guards import Declared


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
                        [Declared("box v", lambda: box["v"], 1)], [(0, 1)],
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


def test_sibling_trace_reading_a_grad_the_first_did_not_keeps_its_guard():
    """A branch traced after another (a sibling path) that reads ``.grad`` while it is None
    depends on that: it used to join the first trace's variant, whose guards do not
    include it, and replay with the ``.grad`` the previous call wrote as if it were None."""
    def run(compiled):
        p = torch.zeros(3, requires_grad=True)
        holder = [p]

        def f(x):
            t = holder[0]
            if x.sum() > 0:
                return x * 2
            g = t.grad
            if g is None:
                t.grad = x.clone()
            else:
                t.grad = g + x
            return x + 1
        cf = compile(f, backend="python") if compiled else f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            for x in (torch.ones(3), -torch.ones(3), -torch.ones(3), -torch.ones(3)):
                cf(x)
        return p.grad.numpy()

    np.testing.assert_array_equal(run(True), run(False))


def test_same_as_compares_every_guard():
    w = torch.randn(2)
    n_leaf = torch.randn(2, requires_grad=True)
    base = Preconditions([(w, False)], [], [], [Declared("v", lambda: 1, 1)], [])
    assert base.same_as(Preconditions([(w, False)], [], [], [Declared("v", lambda: 1, 1)], []))
    for other in (Preconditions([(w, True)], [], [], [Declared("v", lambda: 1, 1)], []),
                  Preconditions([(w, False)], [], [HeldTensor(n_leaf)],
                                [Declared("v", lambda: 1, 1)], []),
                  Preconditions([(w, False)], [], [], [Declared("u", lambda: 1, 1)], []),
                  Preconditions([(w, False)], [], [], [Declared("v", lambda: 1, 1)], [(0, 1)]),
                  Preconditions([(w, False)], [], [], [Declared("v", lambda: 1, 1)], [],
                                memory=())):
        assert not base.same_as(other) and not other.same_as(base)


def test_each_guard_describes_itself():
    w = torch.randn(3, 2)
    a = torch.randn(2)
    a.grad = torch.zeros(2)
    pre = Preconditions([(w, False)], [ArgTensor(0)], [HeldTensor(w)],
                        [Declared("box v", lambda: 1, 1)], [(0, 1)],
                        memory=memory_pattern([a, a, w]))
    text = [str(g) for g in pre.guards]
    assert text == ["lifted tensor [3, 2] float32 on cpu, requires_grad=False",
                    ".grad of argument tensor 0 is a tensor",
                    ".grad of lifted tensor [3, 2] is None",
                    "box v == 1",
                    "arguments 0 and 1 are the same tensor",
                    "tensors sharing memory (arguments, then lifted tensors): tensors 0/1",
                    "no argument is a tensor the function also reads directly"]
    assert len(pre.lifted_tensors) == 1 and pre.lifted_tensors[0] is w
    assert pre.holds([a, a], (a, a), {}) and pre.failure([a, a]) is None
    assert pre.failure([a, torch.randn(2)]) == "arguments 0 and 1 were the same tensor"
