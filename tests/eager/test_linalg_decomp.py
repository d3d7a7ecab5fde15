"""eager.linalg factorizations and norms: qr (three modes), svd (full and reduced), svdvals,
eigh/eigvalsh (both triangles), the old torch.svd/torch.qr forms, vector/matrix norms;
reconstruction and orthogonality, gradients by finite differences (float64, losses that
do not depend on the signs of singular vectors / eigenvectors) and against PyTorch,
PyTorch's errors, compiled replay."""

import numpy as np
import pytest

import compiler
import eager
from eager import linalg as LA
from tests.helpers import gradcheck

rng = np.random.default_rng(11)
SHAPES = [(4, 3), (3, 4), (2, 3, 3)]   # tall, wide, batched square


def r(*shape):
    return rng.standard_normal(shape)


def t(a):
    return eager.tensor(np.asarray(a))


def sym(x):
    return (x + x.mT) * 0.5


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _eye_like(q):
    k = q.shape[-1]
    return np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))


# -- QR -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_reconstructs_with_orthonormal_q(shape, mode):
    a = r(*shape)
    Q, R = LA.qr(t(a), mode=mode)
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(R.shape) == shape[:-2] + ((m if mode == "complete" else k), n)
    _close(np.triu(R.numpy()), R.numpy())
    if mode == "r":
        assert tuple(Q.shape) == (0,)
        _close(np.abs(R.numpy()), np.abs(np.linalg.qr(a, mode="r")))
        return
    q = Q.numpy()
    _close(q @ R.numpy(), a)
    _close(np.swapaxes(q, -1, -2) @ q, _eye_like(q))


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_gradcheck(shape):
    assert gradcheck(lambda a: LA.qr(a).Q, r(*shape))
    assert gradcheck(lambda a: LA.qr(a).R, r(*shape))
    assert gradcheck(lambda a: eager.qr(a).Q * 2.0 + eager.qr(a).R.sum(), r(*shape))


def test_qr_backward_errors_as_pytorch():
    a = eager.tensor(r(4, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q, which is "
                                           "not computed when mode='r'"):
        LA.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="The QR decomposition is not differentiable when "
                                           "mode='complete' and nrows > ncols."):
        LA.qr(a, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'foo' but expected "
                                           "one of 'reduced' \\(default\\), 'r', or 'complete'"):
        LA.qr(a, mode="foo")


# -- SVD ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs(shape, full):
    a = r(*shape)
    res = LA.svd(t(a), full_matrices=full)
    assert type(res).__name__ == "linalg_svd" and res._fields == ("U", "S", "Vh")
    U, S, Vh = (x.numpy() for x in res)
    m, n = shape[-2:]
    k = min(m, n)
    assert U.shape[-2:] == ((m, m) if full else (m, k)) and Vh.shape[-2:] == ((n, n) if full
                                                                              else (k, n))
    _close((U[..., :k] * S[..., None, :]) @ Vh[..., :k, :], a)
    _close(np.swapaxes(U, -1, -2) @ U, _eye_like(U))
    _close(S, np.linalg.svd(a, compute_uv=False))
    _close(LA.svdvals(t(a)).numpy(), S)


def _gauge_invariant(full=False, lib=eager):
    """A function of U, S, Vh that does not change when a singular pair flips sign."""
    def f(a):
        U, S, Vh = lib.linalg.svd(a, full_matrices=full)
        k = S.shape[-1]
        u, vh = U[..., :k], Vh[..., :k, :]
        left = ((u * S.unsqueeze(-2) ** 2) @ u.mT).sum(-1)
        right = ((vh.mT * S.unsqueeze(-2)) @ vh).sum(-1)
        return left.sum(-1) + right[..., 0]
    return f


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_gradcheck(shape):
    a = r(*shape)
    assert gradcheck(LA.svdvals, a)
    assert gradcheck(lambda x: LA.svd(x, full_matrices=False).S, a)
    assert gradcheck(_gauge_invariant(), a)
    assert gradcheck(_gauge_invariant(full=True), a)
    assert gradcheck(lambda x: eager.svd(x).V.abs(), a)


def test_svdvals_gradient_is_finite_for_repeated_singular_values():
    x = eager.eye(3, dtype=eager.float64).requires_grad_(True)
    LA.svdvals(x).sum().backward()
    _close(x.grad.numpy(), np.eye(3))
    y = eager.eye(3, dtype=eager.float64).requires_grad_(True)
    LA.svd(y).S.sum().backward()           # U and Vh unused: their gradients are zero
    _close(y.grad.numpy(), np.eye(3))


def test_torch_svd_form():
    a = r(4, 3)
    U, S, V = eager.svd(t(a))
    assert U.shape == (4, 3) and V.shape == (3, 3)
    _close((U.numpy() * S.numpy()) @ V.numpy().T, a)
    U, S, V = t(a).svd(some=False, compute_uv=False)
    assert U.shape == (4, 4) and V.shape == (3, 3) and not U.numpy().any()
    _close(S.numpy(), np.linalg.svd(a, compute_uv=False))


def test_svd_against_torch():
    torch = pytest.importorskip("torch")
    for shape in SHAPES:
        a = r(*shape)
        for full in (False, True):
            ea = eager.tensor(a, requires_grad=True)
            ta = torch.tensor(a, requires_grad=True)
            _gauge_invariant(full)(ea).sum().backward()
            _gauge_invariant(full, torch)(ta).sum().backward()
            _close(ea.grad.numpy(), ta.grad.numpy(), 1e-8)
        ea = eager.tensor(a, requires_grad=True)
        ta = torch.tensor(a, requires_grad=True)
        (LA.svdvals(ea) ** 3).sum().backward()
        (torch.linalg.svdvals(ta) ** 3).sum().backward()
        _close(ea.grad.numpy(), ta.grad.numpy())
        Q, R = LA.qr(t(a))
        tq, tr = torch.linalg.qr(torch.tensor(a))
        _close(Q.numpy(), tq.numpy())
        _close(R.numpy(), tr.numpy())


# -- eigh ----------------------------------------------------------------------------------

@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_decomposes_and_reads_one_triangle(UPLO):
    a = r(2, 4, 4)
    L, V = LA.eigh(t(a), UPLO=UPLO)
    tri = np.tril(a) if UPLO == "L" else np.triu(a)
    s = tri + np.swapaxes(tri, -1, -2) - np.eye(4) * np.diagonal(a, 0, -2, -1)[..., None, :]
    _close((V.numpy() * L.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2), s)
    _close(L.numpy(), np.linalg.eigvalsh(s))
    assert np.all(np.diff(L.numpy(), axis=-1) > 0)
    _close(LA.eigvalsh(t(a), UPLO).numpy(), L.numpy())


def test_eigh_gradcheck():
    a = r(2, 4, 4)
    assert gradcheck(lambda x: LA.eigh(sym(x)).eigenvalues, a)
    assert gradcheck(lambda x: LA.eigvalsh(sym(x)), a)
    assert gradcheck(lambda x: LA.eigh(sym(x)).eigenvectors.abs(), a)
    assert gradcheck(lambda x: (lambda L, V: (V * L.unsqueeze(-2) ** 3) @ V.mT)(
        *LA.eigh(sym(x))), a)


def test_eigvalsh_gradient_is_finite_for_repeated_eigenvalues():
    x = eager.eye(3, dtype=eager.float64).requires_grad_(True)
    (LA.eigvalsh(x) * eager.tensor([1.0, 2.0, 3.0], dtype=eager.float64)).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    _close(np.trace(x.grad.numpy()), 6.0)


def test_eigh_against_torch():
    torch = pytest.importorskip("torch")
    a = r(3, 4, 4)
    w = r(3, 4, 4)

    def loss(lib, x):
        L, V = lib.linalg.eigh(sym(x))
        return ((V * L.unsqueeze(-2) ** 3) @ V.mT * lib.tensor(w)).sum() + L.sum()
    ea, ta = eager.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    loss(eager, ea).backward()
    loss(torch, ta).backward()
    _close(ea.grad.numpy(), ta.grad.numpy(), 1e-8)
    _close(LA.eigvalsh(t(a), "U").numpy(), torch.linalg.eigvalsh(torch.tensor(a), "U").numpy())


def test_decomposition_errors():
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        LA.eigh(eager.eye(2), UPLO="X")
    with pytest.raises(NotImplementedError, match="\"linalg_eigh_cpu\" not implemented for "
                                                  "'Long'"):
        LA.eigh(eager.ones(2, 2, dtype=eager.int64))
    with pytest.raises(RuntimeError, match="linalg.svd: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        LA.svd(eager.ones(2, 2, dtype=eager.int64))
    with pytest.raises(RuntimeError, match="linalg.svd: The input tensor A must have at least 2 "
                                           "dimensions."):
        LA.svdvals(eager.ones(3))
    with pytest.raises(RuntimeError, match="linalg.qr: The input tensor A must have at least 2 "
                                           "dimensions."):
        LA.qr(eager.ones(3))
    info = LA.cholesky_ex(eager.tensor(np.stack([np.eye(2), [[1.0, 2], [2, 1]]])))
    assert type(info).__name__ == "linalg_cholesky_ex" and info.info.tolist() == [0, 2]
    assert not info.L.numpy()[1].any()


# -- norms ---------------------------------------------------------------------------------

MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_matches_numpy_and_gradcheck(ord):
    a = r(2, 4, 3)
    got = LA.matrix_norm(t(a), ord)
    _close(got.numpy(), np.linalg.norm(a, ord, axis=(-2, -1)))
    kept = LA.matrix_norm(t(a), ord, dim=(0, 2), keepdim=True)
    assert kept.shape == (1, 4, 1)
    _close(kept.numpy()[0, :, 0], np.linalg.norm(np.moveaxis(a, 1, 0), ord, axis=(-2, -1)))
    assert gradcheck(lambda x: LA.matrix_norm(x, ord), a)
    assert gradcheck(lambda x: LA.matrix_norm(x, ord, dim=(2, 0)), a)


def test_norm_forms():
    a = r(3, 4)
    _close(LA.norm(t(a)).numpy(), np.linalg.norm(a))
    _close(LA.norm(t(a), 2).numpy(), np.linalg.norm(a, 2))
    _close(LA.norm(t(a), dim=1).numpy(), np.linalg.norm(a, axis=1))
    _close(LA.norm(t(a[0]), 3).numpy(), np.linalg.norm(a[0], 3))
    _close(LA.vector_norm(t(a), float("inf"), dim=(0, 1)).numpy(), np.abs(a).max())
    _close(LA.vector_norm(t(a), 0.5, keepdim=True).numpy(), np.sum(np.abs(a) ** 0.5) ** 2)
    _close(eager.norm(t(a), "nuc").numpy(), np.linalg.norm(a, "nuc"))
    _close(t(r(2, 3, 3)).norm("nuc", dim=(1, 2)).shape, (2,))
    assert eager.norm(t(a)).item() == pytest.approx(np.linalg.norm(a))
    assert gradcheck(lambda x: LA.norm(x, "nuc") + LA.vector_norm(x, 1.5, dim=0).sum(), a)


def test_norm_errors():
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: The input tensor A must have at "
                                           "least 2 dimensions."):
        LA.matrix_norm(eager.ones(3))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
        LA.matrix_norm(eager.ones(3, 3), ord=3)
    with pytest.raises(RuntimeError, match=r"linalg.matrix_norm: dims must be different. Got "
                                           r"\(0, 0\)"):
        LA.matrix_norm(eager.ones(3, 3), dim=(0, 0))
    with pytest.raises(RuntimeError, match="linalg.norm: If dim is not specified but ord is, "
                                           "the input must be 1D or 2D. Got 3D."):
        LA.norm(eager.ones(3, 3, 3), ord=2)
    with pytest.raises(RuntimeError, match=r"linalg.norm: If dim is specified, it must be of "
                                           r"length 1 or 2. Got \[0, 1, 2\]"):
        LA.norm(eager.ones(3, 3, 3), dim=(0, 1, 2))
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        LA.vector_norm(eager.ones(3, dtype=eager.int64))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 "
                                           "2"):
        eager.norm(eager.ones(2, 3, 3), p="nuc")


def test_norms_against_torch():
    torch = pytest.importorskip("torch")
    a = r(2, 3, 4)
    w = r(2)
    for ord in MATRIX_ORDS:
        ea, ta = eager.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        (LA.matrix_norm(ea, ord) * eager.tensor(w)).sum().backward()
        (torch.linalg.matrix_norm(ta, ord) * torch.tensor(w)).sum().backward()
        _close(ea.grad.numpy(), ta.grad.numpy())
    for kw in ({}, {"ord": 3, "dim": 2}, {"dim": (0, 2)}, {"ord": -1, "dim": (2, 1)}):
        _close(LA.norm(t(a), **kw).numpy(), torch.linalg.norm(torch.tensor(a), **kw).numpy())


# -- compiled --------------------------------------------------------------------------------

def test_compiled_factorizations_replay():
    def step(a):
        s = sym(a)
        return (LA.qr(a).R.sum() + LA.svdvals(a).sum() + LA.eigvalsh(s).sum()
                + LA.eigh(s).eigenvectors.abs().sum() + LA.matrix_norm(a, "nuc").sum()
                + LA.svd(a, full_matrices=False).U.abs().sum())
    cf = compiler.compile(step)
    for i in range(5):
        a = r(2, 4, 4)
        x, y = eager.tensor(a, requires_grad=True), eager.tensor(a, requires_grad=True)
        got, want = cf(x), step(y)
        _close(got.item(), want.item(), 1e-9)
        got.backward()
        want.backward()
        _close(x.grad.numpy(), y.grad.numpy(), 1e-9)
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 3
