"""The eager hot paths that replace a composite or a NumPy call for speed give the same
results: layer_norm as one op (the composite's forward bits; gradients at least as close
to float64's), the small-dimension argmax/argmin and the flat pick/place behind max
pooling (NumPy's own results, NaN, ties and signed zeros included), and the intermediates
a forward hands its backward (``forward_aux``: GELU's ``1 + erf``, attention's weights):
the recomputation's bits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import eager
import eager.nn.functional as F
from eager.ops import reduce as R
from tests.helpers import gradcheck


def _composite_layer_norm(x, w, b, k, eps=1e-5):
    dims = tuple(range(x.ndim - k, x.ndim))
    xc = x - x.mean(dims, keepdim=True)
    var = (xc * xc).mean(dims, keepdim=True)
    out = xc * (var + eps).rsqrt()
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,k", [((4, 8, 16), 1), ((3, 5, 6), 2)])
def test_layer_norm_one_op_matches_composite(affine, shape, k):
    rng = np.random.default_rng(0)
    closer = 0
    for _ in range(10):
        # float32 values (the float64 reference sees the very same inputs)
        xn = (rng.standard_normal(shape) * rng.uniform(0.1, 10)
              + rng.uniform(-5, 5)).astype(np.float32)
        ns = shape[len(shape) - k:]
        wn = rng.standard_normal(ns).astype(np.float32)
        bn = rng.standard_normal(ns).astype(np.float32)
        gn = rng.standard_normal(shape).astype(np.float32)
        res = {}
        for name, dt in (("op", np.float32), ("composite", np.float32), ("f64", np.float64)):
            x = eager.tensor(xn.astype(dt), requires_grad=True)
            w = eager.tensor(wn.astype(dt), requires_grad=True) if affine else None
            b = eager.tensor(bn.astype(dt), requires_grad=True) if affine else None
            if name == "op":
                out = F.layer_norm(x, ns, w, b)
                assert out.grad_fn.name() == "LayerNormBackward0"
            else:
                out = _composite_layer_norm(x, w, b, k)
            out.backward(eager.tensor(gn.astype(dt)))
            res[name] = [out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)
                                                   if t is not None]
        assert np.array_equal(res["op"][0], res["composite"][0])      # the same bits
        for got, comp, ref in zip(res["op"][1:], res["composite"][1:], res["f64"][1:]):
            assert got.dtype == np.float32
            e_op, e_comp = np.abs(got - ref).max(), np.abs(comp - ref).max()
            assert e_op <= e_comp
            closer += e_op < e_comp
    assert closer > 0


def test_layer_norm_composite_cases_stay():
    x = eager.randn(2, 3, dtype=eager.float16, requires_grad=True)
    assert F.layer_norm(x, (3,)).grad_fn.name() != "LayerNormBackward0"
    x = eager.randn(2, 3, requires_grad=True)
    w = eager.ones(3, dtype=eager.float64)
    out = F.layer_norm(x, (3,), w)
    assert out.dtype == eager.float64 and out.grad_fn.name() != "LayerNormBackward0"


def test_layer_norm_gradients_and_double_backward():
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), x, w, b)
    gy = eager.tensor(rng.standard_normal((3, 4)))

    def first(x, w):   # the gradient itself, differentiated again (create_graph)
        for t in (x, w):
            if not t.requires_grad:   # the finite differences' plain tensors
                t.requires_grad_()
        out = F.layer_norm(x, (4,), w)
        return eager.autograd.grad((out * gy).sum(), (x, w), create_graph=True)[0]
    gradcheck(first, x, w)


def _values(rng, shape, dt):
    if np.dtype(dt).kind == "f":
        a = rng.integers(-2, 2, shape).astype(dt)
        for v, p in ((np.nan, 0.05), (-0.0, 0.05), (-np.inf, 0.05)):
            a[rng.random(shape) < p] = v
        return a
    return rng.integers(0, 3, shape).astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.int32, np.uint8,
                                np.bool_])
def test_small_dim_arg_pick_place_match_numpy(dt):
    rng = np.random.default_rng(1)
    for shape in ((32, 16, 4, 16), (32, 32, 4, 4), (6, 5, 30), (3, 40, 7)):
        for d in range(len(shape) - 1):
            a = _values(rng, shape, dt)
            for op, fn in ((R.Argmax, np.argmax), (R.Argmin, np.argmin)):
                for keep in (True, False):
                    got = op.forward(a, dim=(d,), keepdim=keep)
                    assert got.dtype == np.int64
                    assert np.array_equal(got, fn(a, axis=d, keepdims=keep))
                idx = op.forward(a, dim=(d,), keepdim=True)
                for keep in (True, False):
                    got = R.PickAlongDim.forward(a, idx, dim=d, keepdim=keep)
                    ref = np.take_along_axis(a, idx, axis=d)
                    ref = ref if keep else np.squeeze(ref, d)
                    assert got.shape == ref.shape and got.dtype == ref.dtype
                    assert np.array_equal(got.view(np.uint8), ref.view(np.uint8))
                    if a.dtype.kind == "f":
                        placed = R.PlaceAlongDim.forward(got, idx, dim=d, shape=shape)
                        want = np.zeros(shape, a.dtype)
                        np.put_along_axis(want, idx, ref if keep else
                                          np.expand_dims(ref, d), axis=d)
                        assert np.array_equal(placed.view(np.uint8), want.view(np.uint8))


def test_max_pool_gradient_goes_to_first_maximum():
    x = np.zeros((2, 16, 4, 4), np.float32)          # every window ties: first element
    x[0, 0, 1, 1] = np.nan
    t = eager.tensor(x, requires_grad=True)
    out, ind = F.max_pool2d(t, 2, return_indices=True)
    out.sum().backward()
    grad = t.grad.numpy()
    assert grad[0, 0, 1, 1] == 1 and grad[0, 0, 0, 0] == 0 and grad[1, 3, 0, 0] == 1
    assert grad.sum() == out.numel()
    assert ind[0, 0, 0, 0].item() == 5 and ind[1, 0, 1, 1].item() == 10
    assert np.isnan(out[0, 0, 0, 0].item())


@pytest.mark.parametrize("k,s", list(itertools.product((2, 3), (1, 2))))
def test_max_pool_matches_torch(k, s):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((4, 8, 9, 9)).astype(np.float32)
    ours = eager.tensor(x, requires_grad=True)
    ref = torch.tensor(x, requires_grad=True)
    o, t = F.max_pool2d(ours, k, s), torch.nn.functional.max_pool2d(ref, k, s)
    g = np.random.default_rng(3).standard_normal(tuple(o.shape)).astype(np.float32)
    o.backward(eager.tensor(g))
    t.backward(torch.tensor(g))
    assert np.array_equal(o.detach().numpy(), t.detach().numpy())
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-6, atol=1e-6)


def _window_cases():
    yield (2, 3, 7), (3,), (1,), ((1, 1),), (1,)
    yield (2, 3, 8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)
    yield (2, 3, 9, 7), (2, 3), (2, 1), ((0, 2), (1, 0)), (2, 3)
    yield (2, 2, 5, 6), (2, 2), (1, 1), ((-1, 0), (0, -1)), (1, 2)      # crops
    yield (1, 2, 4, 4, 5), (2, 2, 3), (1, 1, 1), ((0, 0), (1, 1), (0, 1)), (1, 2, 1)
    yield (3, 4, 8, 8), (2, 2), (1, 1), ((0, 0), (0, 0)), (2, 2)       # tiles
    yield (3, 4, 9, 7), (2, 3), (1, 1), ((1, 0), (0, 2)), (2, 3)       # tiles, padded


@pytest.mark.parametrize("dt", [np.float32, np.int64])
def test_im2col_col2im_by_index_match_strided_copies(dt, monkeypatch):
    from eager.ops import window as Wn
    rng = np.random.default_rng(5)
    for shape, k, d, p, s in _window_cases():
        x = rng.integers(-9, 9, shape).astype(dt)
        geo = dict(kernel=k, dilation=d, padding=p, stride=s)
        fill = -7 if dt == np.int64 else -np.inf
        monkeypatch.setattr(Wn, "_GATHER_BELOW", 10 ** 6)
        cols = Wn.Im2col.forward(x, fill=fill, **geo)
        back = Wn.Col2im.forward(np.where(cols == fill, 0, cols).astype(dt), size=shape[2:],
                                 **geo)
        monkeypatch.setattr(Wn, "_GATHER_BELOW", 0)
        ref = Wn.Im2col.forward(x, fill=fill, **geo)
        assert cols.dtype == ref.dtype and np.array_equal(cols, ref), (shape, k, p, s)
        want = Wn.Col2im.forward(np.where(ref == fill, 0, ref).astype(dt), size=shape[2:],
                                 **geo)
        assert back.shape == want.shape and np.array_equal(back, want), (shape, k, p, s)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, True), (False, False, True)])
def test_attention_one_op_matches_composite(causal, needs, monkeypatch):
    from eager.nn.fn import attention as At
    rng = np.random.default_rng(6)
    for shape, s in (((4, 2, 8, 8), 8), ((3, 5, 4), 7)):
        arrays = (rng.standard_normal(shape).astype(np.float32),
                  rng.standard_normal(shape[:-2] + (s, shape[-1])).astype(np.float32),
                  rng.standard_normal(shape[:-2] + (s, 5)).astype(np.float32))
        g = rng.standard_normal(shape[:-1] + (5,)).astype(np.float32)
        res = []
        for one_op in (True, False):
            if not one_op:
                monkeypatch.setattr(At, "_one_op", lambda *a: False)
            q, k, v = (eager.tensor(a, requires_grad=n) for a, n in zip(arrays, needs))
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            named = out.grad_fn.name() == "ScaledDotProductAttentionBackward0"
            assert named == one_op
            out.backward(eager.tensor(g))
            res.append([out.detach().numpy()] + [None if t.grad is None else t.grad.numpy()
                                                 for t in (q, k, v)])
            monkeypatch.undo()
        for a, b in zip(*res):                           # the same bits
            assert (a is None and b is None) or np.array_equal(a, b)


@pytest.mark.parametrize("shape", [(4, 8), (5,), (), (2, 0)])
def test_embedding_matches_index_select(shape):
    rng = np.random.default_rng(7)
    table = eager.tensor(rng.standard_normal((6, 3)).astype(np.float32), requires_grad=True)
    idx = eager.tensor(rng.integers(0, 6, shape))
    out = F.embedding(idx, table)
    ref = eager.index_select(table, 0, idx.reshape(-1)).reshape(tuple(shape) + (3,))
    assert np.array_equal(out.detach().numpy(), ref.detach().numpy())
    g = eager.tensor(rng.standard_normal(tuple(shape) + (3,)).astype(np.float32))
    (gt,) = eager.autograd.grad(out, table, g)
    (gr,) = eager.autograd.grad(ref, table, g)
    assert np.array_equal(gt.numpy(), gr.numpy())
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(eager.tensor([0, 6]), table)


def _conv_cases():
    yield F.conv2d, (2, 3, 6, 5), (4, 3, 3, 2), dict(padding=1, stride=(1, 2))
    yield F.conv2d, (3, 6, 4), (5, 3, 1, 1), dict(groups=1)          # unbatched, 1x1
    yield F.conv1d, (2, 3, 9), (4, 3, 3), dict(dilation=2, padding="same")
    yield F.conv3d, (1, 2, 4, 4, 3), (3, 2, 2, 2, 2), dict(stride=2)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_grad", [True, False])
def test_conv_product_one_op_matches_composite(bias, x_grad, monkeypatch):
    from eager.nn.fn import conv as Cv
    rng = np.random.default_rng(8)
    for fn, xs, ws, kw in _conv_cases():
        xn = rng.standard_normal(xs).astype(np.float32)
        wn = rng.standard_normal(ws).astype(np.float32)
        bn = rng.standard_normal(ws[0]).astype(np.float32)
        res = []
        for one_op in (True, False):
            if not one_op:
                monkeypatch.setattr(Cv, "_one_op", lambda *a: False)
            x = eager.tensor(xn, requires_grad=x_grad)
            w = eager.tensor(wn, requires_grad=True)
            b = eager.tensor(bn, requires_grad=True) if bias else None
            out = fn(x, w, b, **kw)
            names = {out.grad_fn.name()} | {f.name() for f, _ in out.grad_fn.next_functions
                                            if f is not None}
            assert ("ConvProductBackward0" in names) == one_op
            out.relu_()                 # in place on the result: allowed either way
            g = np.random.default_rng(9).standard_normal(tuple(out.shape)).astype(np.float32)
            out.backward(eager.tensor(g))
            res.append([out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)
                                                 if t is not None and t.requires_grad])
            monkeypatch.undo()
        for a, b_ in zip(*res):                          # the same bits
            assert np.array_equal(a, b_)


def _gelu(x):
    return F.gelu(x)


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("fn,shapes", [(_gelu, [(4, 8, 64)]), (_attention, [(2, 3, 5, 4)] * 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_forwards_kept_intermediates_give_the_recomputed_gradients(fn, shapes, dtype):
    """A plain backward uses what the forward kept (node.aux, then freed); a tensor
    backward (create_graph) recomputes it: the same bits, twice with retain_graph."""
    rng = np.random.default_rng(5)
    xs = [eager.tensor((rng.standard_normal(s) * 3).astype(dtype), requires_grad=True)
          for s in shapes]
    g = eager.tensor(rng.standard_normal(fn(*xs).shape).astype(dtype))
    out = fn(*xs)
    node = out.grad_fn
    # GELU keeps 1 + erf for float32 only (its float64 form is one NumPy expression)
    assert (node.aux is not None) == (dtype == np.float32 or fn is _attention)
    first = eager.autograd.grad(out, xs, g, retain_graph=True)
    again = eager.autograd.grad(out, xs, g)
    assert node.aux is None                          # freed with the saved tensors
    with eager.no_grad():
        assert fn(*xs).grad_fn is None
    graph = eager.autograd.grad(fn(*xs), xs, g, create_graph=True)
    for a, b, c in zip(first, again, graph):
        assert a.dtype == c.dtype == xs[0].dtype
        np.testing.assert_array_equal(a.numpy(), c.detach().numpy())
        np.testing.assert_array_equal(b.numpy(), c.detach().numpy())
