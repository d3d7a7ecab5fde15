"""The engine's hook points: post-accumulate-grad hooks on leaves (run as soon as a leaf's
gradient is complete, before the rest of the backward) and ``queue_callback`` (run when
the backward has finished)."""

import numpy as np
import pytest

import eager
from eager.autograd.engine import queue_callback


def test_post_accumulate_hook_sees_the_accumulated_grad():
    w = eager.tensor([1.0, 2.0], requires_grad=True)
    w.grad = eager.tensor([10.0, 10.0])
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.tolist())))
    (w * 3).sum().backward()
    assert seen == [(True, [13.0, 13.0])]


def test_post_accumulate_hook_runs_before_the_rest_of_the_backward():
    # w2 is used last in the forward, so its gradient is complete first; w1's node runs after
    w1 = eager.tensor([1.0, 2.0], requires_grad=True)
    w2 = eager.tensor([3.0, 4.0], requires_grad=True)
    order = []
    h = (w1 * 2).exp()
    h.register_hook(lambda g: order.append("h"))
    w1.register_post_accumulate_grad_hook(lambda p: order.append("w1"))
    w2.register_post_accumulate_grad_hook(lambda p: order.append("w2"))
    (h * w2).sum().backward()
    assert order.index("w2") < order.index("h") < order.index("w1")


def test_post_accumulate_hook_waits_for_every_gradient_of_a_leaf():
    w = eager.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    y = (w * 2).exp().sum() + (w * w).sum() + w.sum()
    y.backward()
    expected = (2 * np.exp(2 * np.array([1.0, 2.0])) + 2 * np.array([1.0, 2.0]) + 1).tolist()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], expected, rtol=1e-6)


def test_post_accumulate_hook_remove_and_errors():
    w = eager.tensor([1.0], requires_grad=True)
    calls = []
    handle = w.register_post_accumulate_grad_hook(lambda p: calls.append(1))
    handle.remove()
    (w * 2).sum().backward()
    assert calls == []
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        eager.tensor([1.0]).register_post_accumulate_grad_hook(lambda p: None)


def test_post_accumulate_hook_not_run_by_autograd_grad_nor_for_unwanted_inputs():
    a = eager.tensor([1.0], requires_grad=True)
    b = eager.tensor([2.0], requires_grad=True)
    calls = []
    a.register_post_accumulate_grad_hook(lambda p: calls.append("a"))
    b.register_post_accumulate_grad_hook(lambda p: calls.append("b"))
    eager.autograd.grad((a * b).sum(), [a, b])
    assert calls == [] and a.grad is None
    (a * b).sum().backward(inputs=[b])
    assert calls == ["b"] and a.grad is None and b.grad.tolist() == [1.0]


def test_post_accumulate_hook_matches_torch():
    torch = pytest.importorskip("torch")
    seen, tseen = [], []
    x = eager.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    tx = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    tx.register_post_accumulate_grad_hook(lambda p: tseen.append(p.grad.tolist()))
    for _ in range(2):  # the second backward accumulates
        (x.tanh() * x).sum().backward()
        (tx.tanh() * tx).sum().backward()
    np.testing.assert_allclose(seen, tseen, rtol=1e-6)


def test_queue_callback_runs_after_every_grad_is_written():
    w1 = eager.tensor([1.0], requires_grad=True)
    w2 = eager.tensor([2.0], requires_grad=True)
    events = []

    def hook(p):
        if not events:
            queue_callback(lambda: events.append(("end", w1.grad.tolist(), w2.grad.tolist())))
            queue_callback(lambda: queue_callback(lambda: events.append(("nested",))))
        events.append("hook")

    w1.register_post_accumulate_grad_hook(hook)
    w2.register_post_accumulate_grad_hook(hook)
    (w1 * w2).sum().backward()
    assert events == ["hook", "hook", ("end", [2.0], [1.0]), ("nested",)]
    (w1 * w2).sum().backward()  # a new backward starts with an empty queue
    assert events[4:] == ["hook", "hook"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="only be installed during backward"):
        queue_callback(lambda: None)


def test_post_accumulate_hooks_under_compile_run_once_per_backward():
    import compiler

    w = eager.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    w.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.tolist()))

    def loss(x):
        return (w * x).sum()

    f = compiler.compile(loss)
    for i in range(3):
        w.grad = None
        f(eager.tensor([1.0, float(i)])).backward()
        compiler.wait()
    assert calls == [[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]
    compiler.reset()
