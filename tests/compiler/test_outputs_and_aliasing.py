"""Compiled outputs keep eager's autograd rules (version checks on saved values), and
arguments that share memory are replayed as eager runs them."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager as torch

INPLACE_ERROR = "modified by an inplace operation"


def _calls(n=5):
    for i in range(n):
        yield i
        if i == 1:
            compiler.wait()


@pytest.mark.regression("y = f(x); y.add_(1); y.sum().backward() gave exp(x)+1's gradient")
def test_inplace_write_on_saved_output_raises_like_eager():
    def f(x):
        return torch.exp(x)

    cf = compiler.compile(f)
    for i in _calls():
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = cf(x)
        y.add_(1.0)
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            y.sum().backward()
        xe = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        ye = f(xe)
        ye.add_(1.0)
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            ye.sum().backward()
    assert cf.stats()["hits"] >= 3


def test_inplace_write_on_saved_input_raises_like_eager():
    def f(x, w):
        return x * w  # mul saves both inputs

    cf = compiler.compile(f)
    for i in _calls():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0])
        y = cf(x, w)
        w.mul_(2.0)
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            y.sum().backward()


def test_inplace_write_on_an_output_that_is_not_saved_is_fine():
    def f(x):
        return x * 2.0  # saves nothing but the scalar

    cf = compiler.compile(f)
    for i in _calls():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = cf(x)
        y.add_(1.0)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_output_view_of_a_graph_value_refuses_inplace_like_eager():
    def f(x):
        return torch.exp(x).reshape(2, 2)

    cf = compiler.compile(f)
    for i in _calls():
        for fn in (f, cf):
            x = torch.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
            y = fn(x)
            with pytest.raises(RuntimeError, match="in-place modification of a view"):
                y.mul_(2.0)
    assert cf.stats()["hits"] >= 3


# -- arguments that share memory ---------------------------------------------------------------

def _writes_through_view(base, v):
    v.add_(1.0)
    return base * 2


@pytest.mark.regression("f(base, base[1]) missed the write seen through the other argument")
def test_aliasing_arguments_see_the_write():
    cf = compiler.compile(_writes_through_view)
    for i in _calls(6):
        alias = i % 2 == 0
        bc = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        be = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        vc = bc[1] if alias else torch.tensor([10.0, 20.0])
        ve = be[1] if alias else torch.tensor([10.0, 20.0])
        got = cf(bc, vc)
        want = _writes_through_view(be, ve)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"call {i}")
        np.testing.assert_array_equal(bc.numpy(), be.numpy(), err_msg=f"base after call {i}")


def test_same_tensor_twice_with_inplace():
    def f(a, b):
        a.mul_(2.0)
        return a + b

    cf = compiler.compile(f)
    for i in _calls():
        xc = torch.tensor([1.0, 2.0])
        xe = torch.tensor([1.0, 2.0])
        np.testing.assert_array_equal(cf(xc, xc).numpy(), f(xe, xe).numpy())
        np.testing.assert_array_equal(xc.numpy(), xe.numpy())


def test_argument_aliasing_a_lifted_tensor():
    w = torch.tensor([1.0, 2.0, 3.0])

    def f(v):
        w.add_(1.0)
        return v * 2

    we = torch.tensor([1.0, 2.0, 3.0])

    def fe(v):
        we.add_(1.0)
        return v * 2

    cf = compiler.compile(f)
    for i in _calls(6):
        alias = i >= 3
        vc = w[1:] if alias else torch.tensor([5.0, 6.0])
        ve = we[1:] if alias else torch.tensor([5.0, 6.0])
        np.testing.assert_array_equal(cf(vc).numpy(), fe(ve).numpy(), err_msg=f"call {i}")
        np.testing.assert_array_equal(w.numpy(), we.numpy())


@pytest.mark.regression("a user error in the traced code was reported as a compile failure")
def test_users_inplace_error_is_raised_where_eager_raises_it(recwarn):
    def f(x):
        y = torch.exp(x)
        y.add_(1.0)  # exp saved y for its backward: eager's backward raises
        return y

    cf = compiler.compile(f)
    for i in _calls():
        x = torch.tensor([0.5, 1.5], requires_grad=True)
        y = cf(x)
        np.testing.assert_allclose(y.detach().numpy(), np.exp([0.5, 1.5]) + 1, rtol=1e-6)
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            y.sum().backward()
    assert not [w for w in recwarn if issubclass(w.category, compiler.CompileWarning)]
    assert cf.stats()["hits"] >= 3


@pytest.mark.regression("a returned namedtuple was a constant: every replay gave the first result")
def test_returned_namedtuple_is_rebuilt_on_every_call():
    f = compiler.compile(lambda x: torch.max(x * 1.0, 0))
    for i in _calls():
        v = [float(i), 2.0 - i]
        got = f(torch.tensor(v))
        assert got.values.item() == max(v) and got.indices.item() == v.index(max(v))
    assert f.stats()["hits"] >= 3
