"""The backward engine's fast path for spine graphs (each node sends to at most one node
plus leaves, no leaf reached twice: an MLP, a compiled model under its loss) gives what
the general walk gives: gradients, the order leaf hooks and post-accumulate hooks run
in, ownership of the arrays put into ``.grad``, and the fallback when a leaf is reached
twice.  The general walk is forced with ``detect_anomaly`` (it never takes the fast
path) and the spine detection itself is checked on the graphs."""

from __future__ import annotations

import numpy as np

import eager as torch
from eager import nn
from eager.autograd import engine


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 4), nn.ReLU(),
                         nn.Linear(4, 2))


def _run(general: bool):
    model = _mlp()
    x = torch.randn(6, 3)
    y = torch.tensor([0, 1, 1, 0, 1, 0])
    order = []
    for name, p in model.named_parameters():
        p.register_hook(lambda g, name=name: order.append(("hook", name)) or g * 2.0)
        p.register_post_accumulate_grad_hook(lambda t, name=name: order.append(("post", name)))
    loss = nn.functional.cross_entropy(model(x), y)
    assert (engine._chain(loss) is not None) is True
    if general:
        with torch.autograd.detect_anomaly():
            loss.backward()
    else:
        loss.backward()
    return [p.grad.numpy().copy() for p in model.parameters()], order


def test_an_mlp_spine_equals_the_general_walk_with_hooks():
    fast, order_fast = _run(False)
    slow, order_slow = _run(True)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    assert order_fast == order_slow
    assert order_fast[0] == ("hook", "4.weight") and order_fast[-1] == ("post", "0.bias")


def test_accumulates_into_existing_grads_and_owns_its_arrays():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    out = (a + b).sum()          # add's backward hands the same array to both leaves
    assert engine._chain(out) is not None
    out.backward()
    a.grad.add_(100.0)           # must not show up in b.grad
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    (a * 3.0).sum().backward()   # accumulates
    np.testing.assert_array_equal(a.grad.numpy(), [104.0, 104.0])


def test_a_leaf_reached_twice_takes_the_general_walk():
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    h = (w * 2.0).tanh()
    out = (h * w).sum()          # w reaches the graph twice
    assert engine._chain(out) is None
    out.backward()
    wn = w.detach().numpy()
    t = np.tanh(2 * wn)
    np.testing.assert_allclose(w.grad.numpy(), t + wn * 2 * (1 - t * t), rtol=1e-6)


def test_a_branching_graph_is_not_a_spine_and_a_chain_with_leaves_is():
    x = torch.randn(4, requires_grad=True)
    y = x.exp()
    assert engine._chain((y * y.sin()).sum()) is None   # y feeds two nodes
    lin = nn.Linear(4, 3)
    assert len(engine._chain(lin(x).relu().sum())) == 3   # sum, relu, linear


def test_a_backward_after_vmap_does_not_walk_the_graph_for_devices():
    """Batched (vmap) grad nodes count as device nodes; each node knows whether one lies
    behind it (``Node.dev``), so a later CPU backward decides in O(1), not by walking its
    whole graph."""
    from eager.func import grad, vmap

    w = torch.randn(3, requires_grad=True)
    per_sample = vmap(grad(lambda w, x: (w * x).sum()), in_dims=(None, 0))
    per_sample(w, torch.randn(4, 3))               # makes batched grad nodes
    h = w
    for _ in range(50):
        h = (h * 1.01).tanh()
    loss = h.sum()
    assert loss.grad_fn.dev is False and not engine._touches_device([loss])
    loss.backward()
    assert w.grad is not None and w.grad.shape == (3,)
