"""Linear algebra: matmul in all of PyTorch's cases, mm/bmm/dot/mv/outer, einsum, tril/triu,
diag, linear; gradients by finite differences (float64) and against torch where installed."""

import numpy as np
import pytest

import eager
from eager.fn.linalg import linear
from tests.helpers import gradcheck

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def t(a, requires_grad=False):
    return eager.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


MATMUL_SHAPES = [
    ((3,), (3,)),                 # dot
    ((2, 3), (3, 4)),             # mm
    ((3,), (3, 4)),               # vector @ matrix
    ((2, 3), (3,)),               # matrix @ vector
    ((5, 2, 3), (3, 4)),          # batch @ matrix (folded into one GEMM)
    ((2, 3), (5, 3, 4)),          # matrix @ batch
    ((5, 2, 3), (5, 3, 4)),       # bmm
    ((2, 1, 2, 3), (4, 3, 2)),    # broadcast batch dims
    ((1, 2, 3), (4, 1, 3, 2)),
    ((3,), (2, 3, 4)),            # vector @ batch
    ((2, 4, 3), (3,)),            # batch @ vector
    ((2, 1, 4, 3), (3,)),
    ((3,), (2, 1, 3, 4)),
]


# -- matmul -----------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_forward_matches_numpy(sa, sb):
    a, b = r(*sa).astype(np.float32), r(*sb).astype(np.float32)
    out = eager.matmul(eager.tensor(a), eager.tensor(b))
    expected = np.matmul(a, b)
    assert out.shape == expected.shape
    assert out.dtype == eager.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((eager.tensor(a) @ eager.tensor(b)).numpy(), expected, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_gradcheck(sa, sb):
    assert gradcheck(eager.matmul, r(*sa), r(*sb))


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_grads_match_torch(sa, sb):
    torch = pytest.importorskip("torch")
    a, b, w = r(*sa), r(*sb), None
    ea, eb = t(a, True), t(b, True)
    out = ea @ eb
    w = r(*out.shape)
    (out * t(w)).sum().backward()
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    ((ta @ tb) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sa,sb", [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((2, 3, 0), (0, 4)),
                                   ((2, 0, 3), (3, 4)), ((0,), (0,)), ((2, 0, 3), (2, 3, 5))])
def test_matmul_empty(sa, sb):
    a, b = t(r(*sa), True), t(r(*sb), True)
    out = a @ b
    assert out.shape == np.matmul(np.ones(sa), np.ones(sb)).shape
    assert not out.detach().numpy().any()
    out.sum().backward()
    assert a.grad.shape == sa and b.grad.shape == sb
    assert not b.grad.numpy().any() and not a.grad.numpy().any()


def test_matmul_one_side_requires_grad():
    a, b = t(r(4, 2, 3), True), t(r(3, 5))
    (a @ b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(b.numpy().sum(1), (4, 2, 3)))
    a, b = t(r(4, 2, 3)), t(r(3, 5), True)
    (a @ b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(),
                               a.numpy().reshape(-1, 3).T @ np.ones((8, 5)), rtol=1e-12)


def test_matmul_methods_and_operators():
    a, b = r(2, 3), r(3, 4)
    ea, eb = t(a), t(b)
    for out in (ea.matmul(eb), ea.mm(eb), ea @ eb, a @ eb, ea @ b):
        assert isinstance(out, eager.Tensor)
        np.testing.assert_allclose(out.numpy(), a @ b)
    v = r(3)
    np.testing.assert_allclose(ea.mv(t(v)).numpy(), a @ v)
    np.testing.assert_allclose(t(v).dot(t(v)).numpy(), v @ v)
    np.testing.assert_allclose(t(r(2, 2, 3)).bmm(t(r(2, 3, 1))).shape, (2, 2, 1))
    np.testing.assert_allclose(t(v).outer(t(a[0])).numpy(), np.outer(v, a[0]))


def test_rmatmul_with_ndarray_builds_graph():
    a = r(2, 3)
    b = t(r(3, 4), True)
    out = a @ b
    assert isinstance(out, eager.Tensor) and out.grad_fn is not None
    out.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.T @ np.ones((2, 4)))


def test_matmul_integer_tensors():
    a = eager.tensor([[1, 2], [3, 4]])
    out = a @ a
    assert out.dtype == eager.int64
    assert out.tolist() == [[7, 10], [15, 22]]


def test_matmul_dot_is_zero_dim():
    out = eager.tensor([1.0, 2.0]) @ eager.tensor([3.0, 4.0])
    assert out.shape == () and out.item() == 11.0 and out.dtype == eager.float32


def test_matmul_result_is_writable_and_independent():
    a = eager.tensor(r(4, 2, 3).astype(np.float32))
    b = eager.tensor(r(3, 2).astype(np.float32))
    out = a @ b
    out.add_(1.0)
    assert a._version_value == 0 and b._version_value == 0


def test_matmul_non_contiguous_inputs():
    a = r(3, 2, 4)
    ea = eager.tensor(a, requires_grad=True)
    at = ea.transpose(0, 2)          # (4, 2, 3) non-contiguous
    b = t(r(3, 5), True)
    out = at @ b
    np.testing.assert_allclose(out.detach().numpy(), a.transpose(2, 1, 0) @ b.detach().numpy())
    assert gradcheck(lambda x, y: x.transpose(0, 2) @ y, a, r(3, 5))


def test_matmul_second_order():
    # f(x) = x^T A x  ->  grad = (A + A^T) x,  Hessian-vector product = (A + A^T) v
    A, x0, v = r(3, 3), r(3), r(3)
    x = t(x0, True)
    f = x @ (t(A) @ x)
    (g,) = eager.autograd.grad(f, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), (A + A.T) @ x0, rtol=1e-12)
    (hv,) = eager.autograd.grad(g @ t(v), x)
    np.testing.assert_allclose(hv.numpy(), (A + A.T) @ v, rtol=1e-12)


def test_matmul_grad_fn():
    a = t(r(2, 3), True)
    out = a @ t(r(3, 2))
    assert out.grad_fn.name() == "MatmulBackward0"
    assert len(out.grad_fn.next_functions) == 2
    assert out.grad_fn.next_functions[1][0] is None


# -- matmul errors ----------------------------------------------------------------------

def test_matmul_shape_error_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"\(3, 4\) and \(5, 2\) cannot be multiplied") as e:
        eager.ones(3, 4) @ eager.ones(5, 2)
    assert "3x4 and 5x2" in str(e.value)
    with pytest.raises(RuntimeError, match=r"\(3,\) and \(4,\)"):
        eager.ones(3) @ eager.ones(4)
    with pytest.raises(RuntimeError, match=r"\(3, 4\) and \(5,\)"):
        eager.ones(3, 4) @ eager.ones(5)
    with pytest.raises(RuntimeError, match=r"\(3,\) and \(4, 2\)"):
        eager.ones(3) @ eager.ones(4, 2)
    with pytest.raises(RuntimeError, match=r"\(2, 3, 4\) and \(3, 4, 2\).*tensor a \(2\).*"
                                           r"tensor b \(3\)"):
        eager.ones(2, 3, 4) @ eager.ones(3, 4, 2)


def test_matmul_dtype_mismatch_does_not_promote():
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: "
                                           "float != double"):
        eager.ones(2, 2) @ eager.ones(2, 2, dtype=eager.float64)
    with pytest.raises(RuntimeError, match="long int != float"):
        eager.ones(2, 2, dtype=eager.int64) @ eager.ones(2, 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        eager.mm(eager.ones(2, 2), eager.ones(2, 2, dtype=eager.float64))


def test_matmul_torch_error_messages_agree():
    torch = pytest.importorskip("torch")
    cases = [((3, 4), (5, 2)), ((3,), (4,)), ((3, 4), (5,)), ((3,), (4, 2))]
    for sa, sb in cases:
        with pytest.raises(RuntimeError) as te:
            torch.ones(*sa) @ torch.ones(*sb)
        with pytest.raises(RuntimeError) as ee:
            eager.ones(*sa) @ eager.ones(*sb)
        assert str(te.value) in str(ee.value)
    with pytest.raises(RuntimeError) as te:
        torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError) as ee:
        eager.ones(2, 2) @ eager.ones(2, 2, dtype=eager.float64)
    assert str(te.value) in str(ee.value)


def test_matmul_zero_dim_and_non_tensor():
    with pytest.raises(RuntimeError, match="at least 1D, but they are 0D and 2D"):
        eager.matmul(eager.from_numpy(np.array(1.0, np.float32)), eager.ones(2, 2))
    with pytest.raises(TypeError, match=r"matmul\(\): argument 'other' \(position 2\) must be "
                                        "Tensor, not int"):
        eager.matmul(eager.ones(2), 3)
    with pytest.raises(TypeError):
        eager.ones(2) @ 3


def test_mm_bmm_dot_mv_shape_rules():
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        eager.mm(eager.ones(2), eager.ones(2, 2))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        eager.mm(eager.ones(2, 2), eager.ones(2))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x2 and 3x2\)"):
        eager.mm(eager.ones(2, 2), eager.ones(3, 2))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        eager.bmm(eager.ones(2, 2), eager.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        eager.bmm(eager.ones(2, 2, 2), eager.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[2, 4\] but got: \[3, 4\]"):
        eager.bmm(eager.ones(2, 3, 4), eager.ones(3, 4, 2))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        eager.bmm(eager.ones(2, 3, 4), eager.ones(2, 4, 2, dtype=eager.float64))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        eager.dot(eager.ones(2, 2), eager.ones(2))
    with pytest.raises(RuntimeError, match=r"inconsistent tensor size, expected tensor \[3\] and "
                                           r"src \[4\]"):
        eager.dot(eager.ones(3), eager.ones(4))
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but "
                                           "found Float and Double"):
        eager.dot(eager.ones(3), eager.ones(3, dtype=eager.float64))
    with pytest.raises(RuntimeError, match=r"size mismatch, got input \(3\), mat \(3x4\), "
                                           r"vec \(5\)"):
        eager.mv(eager.ones(3, 4), eager.ones(5))
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 1, 2, 2"):
        eager.mv(eager.ones(3, 4), eager.ones(4, 1))
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        eager.outer(eager.ones(3, 4), eager.ones(4))
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        eager.ones(2, 2, dtype=eager.bool) @ eager.ones(2, 2, dtype=eager.bool)


@pytest.mark.parametrize("fn,shapes", [
    (eager.mm, ((2, 3), (3, 4))),
    (eager.bmm, ((2, 2, 3), (2, 3, 4))),
    (eager.dot, ((4,), (4,))),
    (eager.mv, ((2, 3), (3,))),
    (eager.outer, ((3,), (4,))),
    (eager.ger, ((2,), (3,))),
])
def test_product_variants_gradcheck(fn, shapes):
    arrays = [r(*s) for s in shapes]
    assert gradcheck(fn, *arrays)


def test_outer_promotes_like_torch():
    out = eager.outer(eager.tensor([1, 2]), eager.tensor([0.5, 1.5]))
    assert out.dtype == eager.float32
    assert out.tolist() == [[0.5, 1.5], [1.0, 3.0]]


# -- einsum -----------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),              # implicit output
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ijk->kij", [(2, 3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("ik,jl->ijkl", [(2, 3), (2, 2)]),
    ("ij,j->i", [(2, 3), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),   # chain of pairwise contractions
    ("i,ij,j->", [(2,), (2, 3), (3,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 2)]),
    ("ij,jk->ki", [(1, 3), (3, 4)]),
    ("ii->", [(3, 3)]),                         # trace
    ("ii->i", [(3, 3)]),                        # diagonal
    ("iij->j", [(2, 2, 3)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ij,ik->", [(2, 3), (2, 4)]),               # labels summed over one operand only
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),  # ellipsis with broadcasting
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]),
    ("b...,b...->b", [(2, 3, 4), (2, 3, 4)]),    # ellipsis dims summed (NumPy refuses)
    ("...i->...", [(2, 3)]),
    ("ij,jk->ik", [(2, 1), (4, 3)]),             # size-1 broadcasting, as PyTorch
    ("Ab,bA", [(2, 3), (3, 2)]),
    ("bA->", [(2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS)
def test_einsum_forward(eq, shapes):
    arrays = [r(*s) for s in shapes]
    out = eager.einsum(eq, *[t(a) for a in arrays])
    expected = np.einsum(eq.replace("b...,b...", "bxy,bxy"), *arrays)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("eq,shapes", EINSUMS)
def test_einsum_gradcheck(eq, shapes):
    assert gradcheck(lambda *ts: eager.einsum(eq, *ts), *[r(*s) for s in shapes])


@pytest.mark.parametrize("eq,shapes", EINSUMS)
def test_einsum_matches_torch(eq, shapes):
    torch = pytest.importorskip("torch")
    arrays = [r(*s) for s in shapes]
    ets = [t(a, True) for a in arrays]
    tts = [torch.tensor(a, requires_grad=True) for a in arrays]
    eo, to = eager.einsum(eq, *ets), torch.einsum(eq, *tts)
    assert tuple(eo.shape) == tuple(to.shape)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = r(*to.shape)
    (eo * t(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for e, tt in zip(ets, tts):
        np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_einsum_list_form_spaces_and_float32():
    a, b = eager.ones(2, 3), eager.ones(3, 4)
    out = eager.einsum("ij, jk -> ik", [a, b])
    assert out.dtype == eager.float32 and out.shape == (2, 4)
    assert out.tolist() == [[3.0] * 4] * 2


def test_einsum_transpose_result_is_a_copy():
    a = eager.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = eager.einsum("ij->ji", a)
    out.add_(10.0)
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    out = eager.einsum("ij->ij", a)
    out.mul_(0.0)
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_einsum_second_order():
    x0 = r(3)
    x = t(x0, True)
    y = eager.einsum("i,i->", x, x * x)            # sum x^3
    (g,) = eager.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x0 ** 2, rtol=1e-12)
    (h,) = eager.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x0, rtol=1e-12)
    m = t(r(3, 3), True)
    tr = eager.einsum("ii->", m)
    (gm,) = eager.autograd.grad(eager.einsum("ij,ij->", m, m) * tr, m, create_graph=True)
    assert gm.requires_grad


def test_einsum_errors():
    a = eager.ones(3, 4)
    with pytest.raises(RuntimeError, match="subscript j has size 5 for operand 1 which does not "
                                           "broadcast with previously seen size 4"):
        eager.einsum("ij,jk", a, eager.ones(5, 2))
    with pytest.raises(RuntimeError, match="fewer operands were provided"):
        eager.einsum("ij,jk", a)
    with pytest.raises(RuntimeError, match="more operands were provided"):
        eager.einsum("ij", a, a)
    with pytest.raises(RuntimeError, match=r"number of subscripts in the equation \(2\) does not "
                                           r"match the number of dimensions \(3\) for operand 0"):
        eager.einsum("ij", eager.ones(3, 4, 5))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        eager.einsum("ij,jk", a, eager.ones(4, 2, dtype=eager.float64))
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        eager.einsum("ij->k", a)
    with pytest.raises(RuntimeError, match="appears more than once"):
        eager.einsum("ij->ii", a)
    with pytest.raises(RuntimeError, match="subscripts must be in"):
        eager.einsum("i1", a)
    with pytest.raises(RuntimeError, match="sizes don't match"):
        eager.einsum("ii", a)
    with pytest.raises(TypeError, match="operand 1 must be a Tensor"):
        eager.einsum("ij,jk", a, np.ones((4, 2)))


# -- tril / triu / diag -----------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, -1, 3, -5])
@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu(name, k):
    a = r(2, 3, 4)
    out = getattr(eager, name)(t(a), k)
    np.testing.assert_array_equal(out.numpy(), getattr(np, name)(a, k))
    np.testing.assert_array_equal(getattr(t(a), name)(diagonal=k).numpy(),
                                  getattr(np, name)(a, k))
    assert gradcheck(lambda x: getattr(eager, name)(x, diagonal=k), a)


def test_tril_inplace_and_errors():
    a = eager.ones(3, 3)
    assert a.tril_() is a
    assert a.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert a._version_value == 1
    b = eager.ones(3, 3, dtype=eager.int64).triu(1)
    assert b.dtype == eager.int64 and b.tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        eager.tril(eager.ones(3))


@pytest.mark.parametrize("shape,k", [((3,), 0), ((3,), 1), ((3,), -2), ((3, 3), 0),
                                     ((2, 4), 1), ((4, 2), -1), ((2, 3), 5), ((2, 3), -1)])
def test_diag(shape, k):
    a = r(*shape)
    out = eager.diag(t(a), k)
    np.testing.assert_array_equal(out.numpy(), np.diag(a, k))
    if np.diag(a, k).size:
        assert gradcheck(lambda x: eager.diag(x, k), a)
    out.add_(1.0)  # a copy, not a read-only view
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        eager.diag(eager.ones(2, 2, 2))


# -- linear -----------------------------------------------------------------------------

@pytest.mark.parametrize("xs", [(5, 4), (4,), (2, 3, 4), (0, 4), (2, 0, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_and_grad(xs, bias):
    x, w, b = r(*xs), r(3, 4), r(3)
    args = [t(x), t(w)] + ([t(b)] if bias else [])
    out = linear(*args)
    expected = x @ w.T + (b if bias else 0)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    if x.size:
        arrays = [x, w] + ([b] if bias else [])
        assert gradcheck(linear, *arrays)


def test_linear_is_one_node():
    x = t(r(2, 4), True)
    w = t(r(3, 4), True)
    b = t(r(3), True)
    out = linear(x, w, b)
    assert out.grad_fn.name() == "LinearBackward0"
    nf = out.grad_fn.next_functions
    assert len(nf) == 3 and all(n.name() == "AccumulateGrad" for n, _ in nf)
    out2 = linear(x.detach(), w, None)
    assert out2.grad_fn.next_functions[0][0] is None


def test_linear_float32_grads_match_torch():
    torch = pytest.importorskip("torch")
    x, w, b = (r(2, 5, 4).astype(np.float32), r(3, 4).astype(np.float32),
               r(3).astype(np.float32))
    ex, ew, eb = (eager.tensor(a, requires_grad=True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    eo = linear(ex, ew, eb)
    to = torch.nn.functional.linear(tx, tw, tb)
    assert eo.dtype == eager.float32
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    (eo * eo).sum().backward()
    (to * to).sum().backward()
    for e, tt in ((ex, tx), (ew, tw), (eb, tb)):
        assert e.grad.dtype == eager.float32
        np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_linear_vector_weight_and_broadcast_bias():
    x, w = r(3, 4), r(4)
    np.testing.assert_allclose(linear(t(x), t(w)).numpy(), x @ w)
    np.testing.assert_allclose(linear(t(x), t(w), t([1.0])).numpy(), x @ w + 1.0)
    W, b = r(2, 4), r(1)
    out = linear(t(x), t(W), t(b))
    np.testing.assert_allclose(out.numpy(), x @ W.T + b)
    assert gradcheck(linear, x, W, b)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(3x4 and 5x2\)"):
        linear(eager.ones(3, 4), eager.ones(2, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: "
                                           "float != double"):
        linear(eager.ones(3, 4), eager.ones(2, 4, dtype=eager.float64))
    with pytest.raises(RuntimeError, match="bias must have the same dtype"):
        linear(eager.ones(3, 4), eager.ones(2, 4), eager.ones(2, dtype=eager.float64))


# -- diagonal, diag_embed, trace, cross -------------------------------------------------------

@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (2, 0), (-1, 1)])
def test_diagonal_and_diag_embed(offset, dims):
    a = r(3, 4, 5)
    d = eager.diagonal(t(a), offset, *dims)
    np.testing.assert_array_equal(d.numpy(), np.diagonal(a, offset, *dims))
    assert gradcheck(lambda x: eager.diagonal(x, offset, *dims), a)
    v = r(2, 3)
    e = eager.diag_embed(t(v), offset, *dims)
    want = np.zeros((2, 3 + abs(offset), 3 + abs(offset))) if dims == (-1, 1) else None
    if want is not None:   # dims (-1, 1) of the 3-D result: matrices in dims 1 and 2, swapped
        for b in range(2):
            want[b] = np.diag(v[b], offset).T
        np.testing.assert_array_equal(e.numpy(), want)
    np.testing.assert_array_equal(eager.diagonal(e, offset, *dims).numpy(), v)
    assert gradcheck(lambda x: eager.diag_embed(x, offset, *dims), v)


def test_diagonal_is_a_writable_view_and_linalg_diagonal():
    x = eager.zeros(3, 3)
    x.diagonal().add_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3))
    b = r(2, 3, 4)
    np.testing.assert_array_equal(eager.linalg.diagonal(t(b), offset=1).numpy(),
                                  np.diagonal(b, 1, -2, -1))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        eager.diagonal(eager.ones(2, 3, 4), 0, 1, 1)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical -2, -2"):
        eager.diag_embed(eager.ones(3), 0, -2, -2)


def test_trace():
    a = r(3, 4)
    assert eager.trace(t(a)).item() == pytest.approx(np.trace(a))
    assert t(a).trace().shape == ()
    assert eager.trace(eager.ones(3, 3, dtype=eager.int32)).dtype == eager.int64
    assert gradcheck(eager.trace, a)
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        eager.trace(eager.ones(3))


def test_cross():
    a, b = r(4, 3), r(1, 3)
    np.testing.assert_allclose(eager.linalg.cross(t(a), t(b)).numpy(), np.cross(a, b))
    c, d = r(3, 2), r(3, 2)
    np.testing.assert_allclose(eager.cross(t(c), t(d), dim=0).numpy(), np.cross(c, d, axis=0))
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is "
                                         "deprecated"):
        got = t(c).cross(t(d))
    np.testing.assert_allclose(got.numpy(), np.cross(c, d, axis=0))
    assert gradcheck(lambda x, y: eager.linalg.cross(x, y), a, b)
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length "
                                           "3. Got 4 and 4"):
        eager.linalg.cross(eager.ones(2, 4), eager.ones(2, 4))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        eager.linalg.cross(eager.ones(2, 3), eager.ones(2, 3, dtype=eager.float64))
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"), \
            pytest.warns(UserWarning):
        eager.cross(eager.ones(2, 4), eager.ones(2, 4))


def test_diagonal_trace_cross_against_torch():
    torch = pytest.importorskip("torch")
    a, b = r(2, 3, 3), r(2, 3, 3)
    for ours, theirs in [
        (lambda x, y: eager.diagonal(x, 1, 0, 2) * 2, lambda x, y: torch.diagonal(x, 1, 0, 2) * 2),
        (lambda x, y: eager.diag_embed(x[0], -1), lambda x, y: torch.diag_embed(x[0], -1)),
        (lambda x, y: eager.trace(x[1]), lambda x, y: torch.trace(x[1])),
        (lambda x, y: eager.linalg.cross(x, y, dim=1), lambda x, y: torch.linalg.cross(x, y,
                                                                                     dim=1)),
    ]:
        ei = [eager.tensor(v, requires_grad=True) for v in (a, b)]
        ti = [torch.tensor(v, requires_grad=True) for v in (a, b)]
        eo, to = ours(*ei), theirs(*ti)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
        w = r(*to.shape)
        (eo * eager.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for e, tt in zip(ei, ti):
            if tt.grad is not None:
                np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy())
