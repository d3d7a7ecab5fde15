"""eager.linalg inverses, solves and determinants: inv/inv_ex, solve/solve_ex (vector and
matrix right-hand sides, left and right, broadcast batches), det (also singular), slogdet,
logdet, pinv/pinverse, lstsq, matrix_rank, matrix_power, multi_dot, and the top-level
forms; against NumPy, finite differences (float64, second derivatives too) and PyTorch;
PyTorch's errors (LinAlgError for singular input); compiled replay."""

import numpy as np
import pytest

import compiler
import eager
from eager import linalg as LA
from tests.helpers import gradcheck

rng = np.random.default_rng(5)


def r(*shape):
    return rng.standard_normal(shape)


def t(a):
    return eager.tensor(np.asarray(a))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def second_order(f, seed=3):
    """``x -> d/dx <f(x), w>`` built with ``create_graph``: its gradcheck checks f's second
    derivatives."""
    def h(x):
        x = x if x.requires_grad else x.detach().requires_grad_(True)
        y = f(x)
        w = eager.tensor(np.random.default_rng(seed).standard_normal(tuple(y.shape)))
        (g,) = eager.autograd.grad((y * w).sum(), x, create_graph=True)
        return g
    return h


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


# -- inverse and determinant ---------------------------------------------------------------

def test_inv_det_slogdet_values():
    a = r(2, 3, 3)
    _close(LA.inv(t(a)).numpy(), np.linalg.inv(a))
    _close(eager.inverse(t(a)).numpy(), np.linalg.inv(a))
    _close(LA.det(t(a)).numpy(), np.linalg.det(a))
    _close(t(a).det().numpy(), np.linalg.det(a))
    sign, logabs = LA.slogdet(t(a))
    _close(sign.numpy(), np.linalg.slogdet(a)[0])
    _close(logabs.numpy(), np.linalg.slogdet(a)[1])
    assert type(eager.slogdet(t(a))).__name__ == "slogdet"
    pos = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    _close(eager.logdet(t(pos)).numpy(), np.log(np.linalg.det(pos)))
    assert np.isnan(eager.logdet(-eager.eye(3)).item())
    assert eager.logdet(eager.zeros(3, 3)).item() == -np.inf


def test_inv_det_slogdet_gradients():
    a = r(2, 3, 3)
    assert gradcheck(LA.inv, a)
    assert gradcheck(LA.det, a)
    assert gradcheck(lambda x: LA.slogdet(x).logabsdet, a)
    assert gradcheck(lambda x: eager.logdet(x @ x.mT + 0.5), a)
    for f in (LA.det, LA.inv, lambda x: LA.slogdet(x).logabsdet):
        assert gradcheck(second_order(f), a, atol=1e-5, rtol=1e-4)


def test_det_gradient_of_singular_matrices_is_the_cofactor_matrix():
    # rank n-1: the cofactor matrix is not zero, and det's gradient is exactly it
    assert gradcheck(LA.det, SINGULAR)
    assert gradcheck(LA.det, np.stack([SINGULAR, np.outer([1.0, 2, 3], [4.0, 5, 6])]))
    x = eager.tensor(SINGULAR, requires_grad=True)
    LA.det(x).backward()
    _close(x.grad.numpy()[0], [4.0, 4.0, -4.0], 1e-12)


def test_inv_ex_and_singular_errors():
    batch = t(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal "
                       r"element 2 is zero, the inversion could not be completed because the "
                       r"input matrix is singular."):
        LA.inv(batch)
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        LA.inv(eager.zeros(3, 3))
    inv, info = LA.inv_ex(batch)
    assert info.dtype == eager.int32 and info.tolist() == [0, 2]
    _close(inv.numpy()[0], np.eye(2))
    assert np.isnan(inv.numpy()[1]).all()
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(batch, check_errors=True)
    with pytest.raises(RuntimeError, match="linalg.inv: A must be batches of square matrices, "
                                           "but they are 3 by 2 matrices"):
        LA.inv(eager.zeros(3, 2))
    with pytest.raises(RuntimeError, match="linalg.det: The input tensor A must have at least 2 "
                                           "dimensions."):
        LA.det(eager.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.det: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        eager.det(eager.eye(2, dtype=eager.int64))


# -- solve ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb,left", [
    ((3, 3), (3,), True), ((3, 3), (3, 2), True), ((2, 3, 3), (2, 3), True),
    ((2, 3, 3), (3, 4), True), ((1, 3, 3), (4, 3, 2), True), ((3, 3), (2, 3), False),
    ((2, 3, 3), (2, 5, 3), False),
])
def test_solve_shapes_values_gradients(sa, sb, left):
    a, b = r(*sa) + 3 * np.eye(sa[-1]), r(*sb)
    x = LA.solve(t(a), t(b), left=left)
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    if left:
        bb = b[..., None] if vector else b
        want = np.linalg.solve(a, bb)
        want = want[..., 0] if vector else want
    else:
        want = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)),
                           -1, -2)
    _close(x.numpy(), want)
    assert gradcheck(lambda p, q: LA.solve(p, q, left=left), a, b)


def test_solve_ex_and_errors():
    a = eager.tensor(np.stack([np.eye(2), np.zeros((2, 2))]), dtype=eager.float32)
    with pytest.raises(LA.LinAlgError, match=r"torch.linalg.solve: \(Batch element 1\): The "
                                             r"solver failed because the input matrix is "
                                             r"singular."):
        LA.solve(a, eager.ones(2, 2, 1))
    x, info = LA.solve_ex(a, eager.ones(2, 2, 1))
    assert info.tolist() == [0, 1] and np.isnan(x.numpy()[1]).all()
    with pytest.raises(RuntimeError, match=r"linalg.solve: Incompatible shapes of A and B for "
                                           r"the equation AX = B \(3x3 and 4x1\)"):
        LA.solve(eager.eye(3), eager.ones(4))
    with pytest.raises(RuntimeError, match=r"the equation XA = B \(3x3 and 2x4\)"):
        LA.solve(eager.eye(3), eager.ones(2, 4), left=False)
    with pytest.raises(RuntimeError, match="linalg.solve: Expected A and B to have the same "
                                           "dtype, but found A of type Double and B of type "
                                           "Float instead"):
        LA.solve(eager.eye(3, dtype=eager.float64), eager.ones(3))


# -- pinv, lstsq, matrix_rank ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_pinv_values_and_gradients(shape):
    a = r(*shape)
    _close(LA.pinv(t(a)).numpy(), np.linalg.pinv(a))
    assert gradcheck(LA.pinv, a)
    assert gradcheck(second_order(LA.pinv), a, atol=1e-5, rtol=1e-4)
    s = a[..., :3, :3] @ np.swapaxes(a[..., :3, :3], -1, -2)
    _close(LA.pinv(t(s), hermitian=True).numpy(), np.linalg.pinv(s), 1e-8)


def test_pinv_cuts_small_singular_values():
    low_rank = np.outer([1.0, 2.0, 3.0], [1.0, -1.0]) + 1e-9 * r(3, 2)
    cut = LA.pinv(t(low_rank), rtol=1e-6).numpy()
    _close(cut, np.linalg.pinv(low_rank, rcond=1e-6), 1e-8)
    _close(eager.pinverse(t(low_rank), rcond=1e-6).numpy(), cut)
    _close(LA.pinv(t(low_rank), atol=1e-3).numpy(), cut, 1e-8)
    assert LA.matrix_rank(t(low_rank)).item() == 2
    assert LA.matrix_rank(t(low_rank), atol=1e-6).item() == 1
    assert LA.matrix_rank(t(low_rank), tol=1e-6).item() == 1
    batch = np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0])])
    rank = LA.matrix_rank(t(batch), hermitian=True)
    assert rank.dtype == eager.int64 and rank.tolist() == [3, 2]


def test_lstsq_drivers_and_gradients():
    a, b = r(5, 3), r(5, 2)
    res = LA.lstsq(t(a), t(b))
    assert type(res).__name__ == "linalg_lstsq"
    _close(res.solution.numpy(), np.linalg.lstsq(a, b, rcond=None)[0])
    assert res.residuals.shape == (0,) and res.singular_values.shape == (0,)
    assert res.rank.dtype == eager.int64 and res.rank.item() == 3
    full = LA.lstsq(t(a), t(b), driver="gelsd")
    _close(full.residuals.numpy(), np.linalg.lstsq(a, b, rcond=None)[1])
    _close(full.singular_values.numpy(), np.linalg.svd(a, compute_uv=False))
    vec = LA.lstsq(t(a), t(b[:, 0])).solution
    assert vec.shape == (3,)
    assert gradcheck(lambda p, q: LA.lstsq(p, q).solution, a, b)
    with pytest.raises(RuntimeError, match=r"parameter `driver` should be one of \(gels, gelsy, "
                                           r"gelsd, gelss\)"):
        LA.lstsq(t(a), t(b), driver="foo")


def test_pinv_lstsq_det_against_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (LA.pinv, torch.linalg.pinv, [r(2, 4, 3)]),
        (LA.det, torch.linalg.det, [r(3, 3, 3)]),
        (LA.inv, torch.linalg.inv, [r(3, 3, 3)]),
        (lambda x: LA.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet,
         [r(3, 3, 3)]),
        (LA.solve, torch.linalg.solve, [r(2, 3, 3), r(2, 3)]),
        (lambda x, y: LA.lstsq(x, y).solution, lambda x, y: torch.linalg.lstsq(x, y).solution,
         [r(6, 3), r(6, 2)]),
        (lambda x: LA.matrix_power(x, -3), lambda x: torch.linalg.matrix_power(x, -3),
         [r(2, 3, 3)]),
        (lambda x, y, z: LA.multi_dot([x, y, z]), lambda x, y, z: torch.linalg.multi_dot(
            [x, y, z]), [r(4), r(4, 6), r(6, 2)]),
    ]
    for ours, theirs, arrays in cases:
        ei = [eager.tensor(a, requires_grad=True) for a in arrays]
        ti = [torch.tensor(a, requires_grad=True) for a in arrays]
        eo, to = ours(*ei), theirs(*ti)
        _close(eo.detach().numpy(), to.detach().numpy(), 1e-9)
        w = r(*tuple(to.shape))
        (eo * eager.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for e, tt in zip(ei, ti):
            _close(e.grad.numpy(), tt.grad.numpy(), 1e-9)


# -- matrix_power, multi_dot ------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -2])
def test_matrix_power(n):
    a = r(2, 3, 3)
    want = np.stack([np.linalg.matrix_power(m, n) for m in a])
    _close(LA.matrix_power(t(a), n).numpy(), want, 1e-9)
    _close(t(a).matrix_power(n).numpy(), want, 1e-9)
    if n:
        assert gradcheck(lambda x: LA.matrix_power(x, n), a)
    ints = eager.ones(3, 3, dtype=eager.int64)
    if n >= 0:
        assert LA.matrix_power(ints, n).dtype == eager.int64


def test_matrix_power_multi_dot_errors():
    with pytest.raises(RuntimeError, match="linalg.matrix_power: A must be batches of square "
                                           "matrices, but they are 3 by 2 matrices"):
        LA.matrix_power(eager.ones(3, 2), 2)
    with pytest.raises(RuntimeError, match="linalg.inv: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        LA.matrix_power(eager.ones(3, 3, dtype=eager.int64), -1)
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): expected at least 2 tensors but got "
                                           "1"):
        LA.multi_dot([eager.ones(3, 2)])
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): the last tensor must be 1D or 2D but "
                                           "got 3D"):
        LA.multi_dot([eager.ones(3, 2), eager.ones(2, 2, 2)])
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): tensors 0 and 1 with shapes \[3, 2\] "
                                           r"and \[3, 2\] cannot be multiplied"):
        LA.multi_dot([eager.ones(3, 2), eager.ones(3, 2)])
    with pytest.raises(RuntimeError, match=r"all tensors must have be the same dtype but tensor "
                                           r"0 is float and tensor 1 double"):
        LA.multi_dot([eager.ones(3, 2), eager.ones(2, 2, dtype=eager.float64)])


def test_multi_dot_order_and_vectors():
    mats = [r(2, 30), r(30, 3), r(3, 40), r(40, 4)]
    _close(LA.multi_dot([t(m) for m in mats]).numpy(), np.linalg.multi_dot(mats), 1e-9)
    v = LA.multi_dot([t(r(3)), t(r(3, 4)), t(r(4))])
    assert v.shape == ()
    assert gradcheck(lambda a, b, c: LA.multi_dot([a, b, c]), r(3), r(3, 5), r(5, 2))


# -- compiled --------------------------------------------------------------------------------

def test_compiled_solves_replay():
    def step(a, b):
        return (LA.solve(a, b).sum() + LA.inv(a).sum() + LA.det(a).sum()
                + LA.slogdet(a).logabsdet.sum() + LA.pinv(a).sum()
                + LA.matrix_power(a, 3).sum() + LA.inv_ex(a).inverse.sum())
    cf = compiler.compile(step)
    for i in range(5):
        a, b = r(2, 3, 3) + 2 * np.eye(3), r(2, 3, 2)
        x1, y1 = eager.tensor(a, requires_grad=True), eager.tensor(b, requires_grad=True)
        x2, y2 = eager.tensor(a, requires_grad=True), eager.tensor(b, requires_grad=True)
        got, want = cf(x1, y1), step(x2, y2)
        _close(got.item(), want.item(), 1e-9)
        got.backward()
        want.backward()
        _close(x1.grad.numpy(), x2.grad.numpy(), 1e-9)
        _close(y1.grad.numpy(), y2.grad.numpy(), 1e-9)
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 3
