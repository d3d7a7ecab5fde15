"""The torch names added by eager/fn/blas.py, eager/fn/pointwise.py, eager/fn/stats.py,
eager/threads.py and eager/nn/sync_batchnorm.py, against PyTorch: values, dtypes,
gradients, errors; finite-difference gradients in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

import eager
from tests.helpers import check_like_torch, gradcheck

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def rnd(*shape):
    return R.standard_normal(shape)


def both(fn_name, *args, **kwargs):
    """(eager result, torch result) of ``fn_name`` on the same arguments (arrays become
    tensors)."""
    e = [eager.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    t = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(eager, fn_name)(*e, **kwargs), getattr(torch, fn_name)(*t, **kwargs)


def same(e, t, rtol=1e-7, atol=1e-9):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b, rtol, atol)
        return
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def like(name, *arrays, rtol=1e-7, atol=1e-9, **kwargs):
    return check_like_torch(lambda *a: getattr(eager, name)(*a, **kwargs),
                            lambda *a: getattr(torch, name)(*a, **kwargs), *arrays,
                            rtol=rtol, atol=atol)


# -- blas ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"beta": 0.5, "alpha": -2.0}, {"beta": 0}])
def test_add_products_like_torch(kw):
    like("addmm", rnd(3, 5), rnd(3, 4), rnd(4, 5), **kw)
    like("addmm", rnd(5), rnd(3, 4), rnd(4, 5), **kw)
    like("addmv", rnd(3), rnd(3, 4), rnd(4), **kw)
    like("baddbmm", rnd(1, 3, 5), rnd(2, 3, 4), rnd(2, 4, 5), **kw)
    like("addbmm", rnd(3, 5), rnd(2, 3, 4), rnd(2, 4, 5), **kw)


def test_add_products_gradcheck_and_methods():
    gradcheck(lambda c, a, b: eager.addmm(c, a, b, beta=0.3, alpha=2.0), rnd(2, 3), rnd(2, 4),
              rnd(4, 3))
    gradcheck(lambda c, a, b: eager.addbmm(c, a, b, alpha=0.5), rnd(2, 3), rnd(3, 2, 4),
              rnd(3, 4, 3))
    x = eager.tensor(rnd(2, 3))
    x.addmm_(eager.tensor(rnd(2, 4)), eager.tensor(rnd(4, 3)), alpha=2)
    y = torch.tensor(x.numpy())
    np.testing.assert_allclose(eager.ones(2).addmv(eager.ones(2, 3), eager.ones(3)).numpy(),
                               torch.ones(2).addmv(torch.ones(2, 3), torch.ones(3)).numpy())
    assert y.shape == (2, 3)


def test_addmm_integers_truncate_alpha():
    e, t = both("addmm", np.ones((2, 2), np.int64), np.ones((2, 3), np.int64),
                np.ones((3, 2), np.int64), alpha=0.5, beta=2)
    same(e, t)


@pytest.mark.parametrize("dims,sb", [(2, (4, 5, 2)), (1, (5, 3)), (0, (2,)),
                                     (([1, 0], [0, 1]), (4, 3, 5)), (([2], [1]), (4, 5)),
                                     (([2, 1], [1, 0]), (4, 5))])
def test_tensordot_like_torch(dims, sb):
    like("tensordot", rnd(3, 4, 5), rnd(*sb), dims=dims)


def test_tensordot_broadcast_dims_and_tensor_dims():
    like("tensordot", rnd(2, 1), rnd(3, 4), dims=([1], [0]))
    e = eager.tensordot(eager.ones(2, 3), eager.ones(3, 4), dims=eager.tensor(1))
    same(e, torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=torch.tensor(1)))


# -- pointwise -----------------------------------------------------------------------------

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -3.0, 1e-300])


def test_atan2_special_values_like_torch():
    y, x = np.meshgrid(SPECIAL, SPECIAL)
    e, t = both("atan2", y, x)
    same(e, t, rtol=1e-15, atol=0)
    num = ~np.isnan(t.numpy())
    assert np.array_equal(np.signbit(e.numpy()[num]), np.signbit(t.numpy()[num]))
    ys, xs = rnd(1000) * 10 ** R.uniform(-3, 3, 1000), rnd(1000)
    same(*both("atan2", ys.astype(np.float32), xs.astype(np.float32)), rtol=4e-7)
    same(*both("atan2", ys, xs), rtol=1e-15, atol=1e-300)


def test_atan2_gradients():
    like("atan2", rnd(4, 5), rnd(5))
    like("arctan2", np.array([1.0, -2.0, 3.0, 0.5]), np.array([1.0, 2.0, -3.0, 0.0]))
    gradcheck(eager.atan2, np.array([1.0, -2.0, 0.3, 0.0, 1.0]),
              np.array([1.0, -2.0, -4.0, 1.0, 0.0]))
    e, t = both("atan2", np.array([1, 2]), np.array([3, 4]))
    same(e, t, rtol=1e-6)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "hypot", "xlogy", "copysign"])
def test_binary_like_torch(name):
    a, b = rnd(3, 4), rnd(4)
    if name == "xlogy":
        a[0, :2] = 0.0
        b = np.abs(b) + 0.1
    like(name, a, b, rtol=1e-12)
    gradcheck(getattr(eager, name), a, b)
    s = SPECIAL
    if name != "xlogy" or True:
        e, t = both(name, *np.meshgrid(s, s))
        same(e, t, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", ["frac", "deg2rad", "rad2deg"])
def test_unary_like_torch(name):
    like(name, rnd(3, 4) * 10, rtol=1e-14)
    gradcheck(getattr(eager, name), rnd(5) * 10)
    x = np.array([1.5, -2.25, np.inf, -0.0])
    same(*both(name, x), rtol=1e-15)
    same(*both(name, x.astype(np.float32)), rtol=1e-7)


def test_dtype_rules_like_torch():
    i = np.array([1, 2, 3])
    for name in ("deg2rad", "rad2deg"):
        same(*both(name, i), rtol=1e-6)
    for name in ("atan2", "xlogy", "copysign"):
        same(*both(name, i, -i), rtol=1e-6)
    same(*both("xlogy", 2, rnd(3)), rtol=1e-12)
    same(*both("xlogy", np.array([0.0, 0.0, 1.0]), np.array([np.nan, 0.0, 0.0])))
    same(*both("copysign", rnd(3), -0.0))
    same(*both("heaviside", np.array([1, 0, -1]), np.array([5])))
    same(*both("heaviside", np.array([1.5, 0.0, -1.0, np.nan]), np.array([0.5])))
    same(*both("addcmul", np.ones(2, np.int64), np.ones(2, np.int64), np.ones(2), value=0.5))
    same(*both("addcmul", np.ones(2, np.int64), np.ones(2, np.int64), np.ones(2, np.int64),
               value=0.5))
    h = np.ones(2, np.float16)
    same(*both("addcdiv", h, h, np.array([3.0], np.float16), value=2), rtol=1e-3)


def test_addcmul_addcdiv_like_torch():
    for name in ("addcmul", "addcdiv"):
        like(name, rnd(3, 1), rnd(3, 4), rnd(4) + 3, value=0.7, rtol=1e-12)
        like(name, rnd(3), rnd(3), rnd(3) + 3, rtol=1e-12)
        gradcheck(lambda a, b, c, n=name: getattr(eager, n)(a, b, c, value=-2.0), rnd(3),
                  rnd(2, 3), rnd(3) + 3)
    x, tx = eager.tensor(rnd(3)), None
    tx = torch.tensor(x.numpy())
    a, b = rnd(3), rnd(3) + 3
    x.addcdiv_(eager.tensor(a), eager.tensor(b), value=2)
    tx.addcdiv_(torch.tensor(a), torch.tensor(b), value=2)
    same(x, tx, rtol=1e-12)


def test_inplace_methods_like_torch():
    for name, args in (("frac_", ()), ("deg2rad_", ()), ("atan2_", (rnd(3),)),
                       ("hypot_", (rnd(3),)), ("xlogy_", (np.abs(rnd(3)),)),
                       ("copysign_", (rnd(3),))):
        a = rnd(3)
        e, t = eager.tensor(a), torch.tensor(a)
        getattr(e, name)(*[eager.tensor(x) for x in args])
        getattr(t, name)(*[torch.tensor(x) for x in args])
        same(e, t, rtol=1e-14)


# -- order statistics ------------------------------------------------------------------------

def test_median_like_torch():
    x = R.permutation(20).reshape(4, 5).astype(np.float64)
    like("median", x)
    like("median", x.ravel()[:6])
    for d in (0, 1, -1):
        for keep in (False, True):
            like("median", x, dim=d, keepdim=keep)
            like("nanmedian", x, dim=d, keepdim=keep)
    like("median", np.array(3.0), dim=0)
    same(*both("median", np.array([3, 1, 2])))
    same(*both("median", np.array([[4, 1, 5]]), 1))


def test_median_ties_spread_the_gradient_like_torch():
    x = np.array([2.0, 1.0, 2.0, 3.0, 2.0, 5.0])
    like("median", x)
    like("nanmedian", np.array([2.0, np.nan, 2.0, 3.0]))


def test_median_nan_like_torch():
    x = np.array([[1.0, np.nan, np.nan], [1.0, 2.0, 3.0], [np.nan, 5.0, 4.0]])
    same(*both("median", x, 1))
    same(*both("nanmedian", x, 1))
    same(*both("median", x))
    same(*both("nanmedian", x))
    same(*both("nanmedian", np.full((2, 3), np.nan), 1))
    same(*both("nanmedian", np.full((3,), np.nan)))
    same(*both("median", np.array([], np.float64)))


def test_mode_like_torch():
    x = np.array([[1.0, 2, 2, 3, 3], [5, 5, 4, 4, 1], [7, 8, 9, 7, 8]])
    like("mode", x)
    like("mode", x, dim=0, keepdim=True)
    like("mode", x, dim=1, keepdim=True)
    same(*both("mode", np.array([3, 1, 3, 1, 2])))
    same(*both("mode", np.array(4.0)))
    xi = R.integers(0, 4, (6, 9))
    same(*both("mode", xi, 1))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_like_torch(interpolation):
    x = rnd(4, 7)
    kw = {"interpolation": interpolation}
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    check_like_torch(lambda a: eager.quantile(a, 0.3, **kw), lambda a: torch.quantile(a, 0.3, **kw),
                     x)
    for d in (None, 0, 1):
        for keep in (False, True):
            check_like_torch(lambda a: eager.quantile(a, eager.tensor(q), d, keep, **kw),
                             lambda a: torch.quantile(a, torch.tensor(q), d, keep, **kw), x)
    xn = x.copy()
    xn[1, 2] = xn[3, 0] = np.nan
    xn[2, :] = np.nan
    for name in ("quantile", "nanquantile"):
        e = getattr(eager, name)(eager.tensor(xn), eager.tensor(q), 1, **kw)
        t = getattr(torch, name)(torch.tensor(xn), torch.tensor(q), 1, **kw)
        same(e, t)
    x32 = x.astype(np.float32)
    same(eager.quantile(eager.tensor(x32), 0.37, dim=0, **kw),
         torch.quantile(torch.tensor(x32), 0.37, dim=0, **kw), rtol=1e-6)


def test_quantile_gradcheck():
    gradcheck(lambda a: eager.quantile(a, eager.tensor([0.2, 0.7], dtype=eager.float64), dim=1),
              rnd(3, 5))


# -- reductions --------------------------------------------------------------------------------

def test_reductions_like_torch():
    x = rnd(3, 4)
    xn = x.copy()
    xn[0, 1] = xn[2, 3] = np.nan
    like("aminmax", x)
    check_like_torch(lambda a: eager.aminmax(a, dim=1, keepdim=True),
                     lambda a: torch.aminmax(a, dim=1, keepdim=True), x)
    same(*both("aminmax", np.array([1, -3, 5])))
    for d in (None, 0, (0, 1)):
        like("nansum", xn, dim=d)
        like("nanmean", xn, dim=d)
    same(*both("nansum", np.array([1, 2, 3])))
    same(*both("nansum", xn, 1, True, dtype=torch.float32) if False else
         (eager.nansum(eager.tensor(xn), 1, True, dtype=eager.float32),
          torch.nansum(torch.tensor(xn), 1, True, dtype=torch.float32)), rtol=1e-6)
    for name in ("std_mean", "var_mean"):
        like(name, x)
        like(name, x, dim=1, keepdim=True)
        like(name, x, dim=0, correction=0)
        same(*both(name, x, 1, False, True))
        same(*both(name, x, False))
        gradcheck(lambda a, n=name: getattr(eager, n)(a, dim=1)[0] + 0, rnd(2, 4))


def test_trapezoid_like_torch():
    y, x = rnd(3, 5), np.sort(rnd(5))
    like("trapezoid", y)
    like("trapezoid", y, dx=0.5, dim=0)
    like("trapezoid", y, x)
    like("trapezoid", y, np.sort(rnd(3, 5), axis=1))
    like("trapz", y, x)
    like("trapz", y, dx=2.0)
    same(*both("trapezoid", np.array([1, 2, 3])))
    same(*both("trapezoid", np.array([1, 2, 3]), dx=2))
    same(*both("trapezoid", np.zeros((2, 0))))
    gradcheck(lambda a, b: eager.trapezoid(a, b), rnd(2, 4), rnd(4))


def test_vander_cov_corrcoef_like_torch():
    same(*both("vander", rnd(4)))     # PyTorch's vander cannot backward (in-place cumprod)
    same(*both("vander", rnd(3), N=5, increasing=True))
    for x in (np.array([1, 2, 3]), np.array([1, 2, 3], np.int32), np.array([True, False])):
        same(*both("vander", x))
    same(*both("vander", rnd(3), N=0))
    x = rnd(3, 6)
    like("cov", x)
    like("cov", x, correction=0)
    like("cov", rnd(6))
    fw, aw = np.array([1, 2, 1, 3, 1, 1]), np.abs(rnd(6))
    check_like_torch(lambda a: eager.cov(a, fweights=eager.tensor(fw), aweights=eager.tensor(aw)),
                     lambda a: torch.cov(a, fweights=torch.tensor(fw), aweights=torch.tensor(aw)),
                     x)
    check_like_torch(lambda a: eager.cov(a, correction=2, aweights=eager.tensor(aw)),
                     lambda a: torch.cov(a, correction=2, aweights=torch.tensor(aw)), x)
    same(*both("cov", np.array([[1, 2, 4], [0, 3, 1]])), rtol=1e-6)
    like("corrcoef", x)
    same(*both("corrcoef", np.array([1.0, 2.0])))
    gradcheck(eager.cov, rnd(2, 5))
    gradcheck(eager.corrcoef, rnd(2, 5), atol=1e-5)
    gradcheck(lambda a: eager.vander(a, 4), rnd(3))


def test_repeat_interleave_like_torch():
    x = rnd(2, 3)
    like("repeat_interleave", x, repeats=2)
    like("repeat_interleave", x, repeats=3, dim=1)
    check_like_torch(lambda a: eager.repeat_interleave(a, eager.tensor([1, 0, 2]), dim=1),
                     lambda a: torch.repeat_interleave(a, torch.tensor([1, 0, 2]), dim=1), x)
    check_like_torch(lambda a: eager.repeat_interleave(a, eager.tensor([2]), dim=0,
                                                      output_size=4),
                     lambda a: torch.repeat_interleave(a, torch.tensor([2]), dim=0,
                                                       output_size=4), x)
    same(*both("repeat_interleave", np.array([2, 0, 3])))
    same(*both("repeat_interleave", np.array([2, 0, 3], np.int32)))
    same(*both("repeat_interleave", np.array(5.0), 3))
    e = eager.tensor([[1, 2]]).repeat_interleave(2)
    same(e, torch.tensor([[1, 2]]).repeat_interleave(2))


# -- errors --------------------------------------------------------------------------------------

ERRORS = [
    ("addmm", (np.ones(3), np.ones((2, 3)), np.ones((4, 5))), {}),
    ("addmm", (np.ones(3), np.ones(3), np.ones((3, 5))), {}),
    ("addmm", (np.ones((2, 2)), np.ones((2, 3)), np.ones((3, 5))), {}),
    ("addmm", (np.ones((2, 5), np.float32), np.ones((2, 3)), np.ones((3, 5))), {}),
    ("addmm", (np.ones((2, 5)), np.ones((2, 3), np.float32), np.ones((3, 5))), {}),
    ("addmv", (np.ones(3), np.ones((3, 2)), np.ones(3)), {}),
    ("addmv", (np.ones(3), np.ones((3, 3)), np.ones((3, 3))), {}),
    ("addmv", (np.ones(2), np.ones((2, 3), np.float32), np.ones(3)), {}),
    ("baddbmm", (np.ones(3), np.ones((2, 3, 4)), np.ones((2, 5, 3))), {}),
    ("baddbmm", (np.ones(3), np.ones((3, 4)), np.ones((2, 5, 3))), {}),
    ("baddbmm", (np.ones(2, np.float32), np.ones((1, 2, 3)), np.ones((1, 3, 2))), {}),
    ("baddbmm", (np.ones(2), np.ones((1, 2, 3), np.float32), np.ones((1, 3, 2))), {}),
    ("addbmm", (np.ones(3), np.ones((2, 3, 4)), np.ones((2, 5, 3))), {}),
    ("addbmm", (np.ones(3), np.ones((3, 3, 4)), np.ones((2, 4, 3))), {}),
    ("tensordot", (np.ones(3), np.ones(3)), {"dims": -1}),
    ("tensordot", (np.ones((2, 3)), np.ones((4, 3))), {"dims": ([1], [0])}),
    ("tensordot", (np.ones((2, 3)), np.ones((4, 3))), {"dims": ([1, 0], [0])}),
    ("tensordot", (np.ones((2, 3)), np.ones((3, 4))), {"dims": 3}),
    ("tensordot", (np.ones((2, 3)), np.ones((3, 4), np.float32)), {"dims": 1}),
    ("tensordot", (np.ones((2, 3)), np.ones((3, 4))), {"dims": (1, 0)}),
    ("frac", (np.array([1, 2]),), {}),
    ("hypot", (np.array([1, 2]), np.array([1, 2])), {}),
    ("logaddexp", (np.array([1, 2]), np.array([1, 2])), {}),
    ("logaddexp2", (np.ones(2), 2), {}),
    ("atan2", (np.ones(2), 2), {}),
    ("heaviside", (np.array([1, 2]), np.ones(2)), {}),
    ("addcdiv", (np.array([1, 2]), np.array([1, 2]), np.array([1, 2])), {}),
    ("median", (np.array([], np.float64).reshape(1, 0), 1), {}),
    ("median", (np.array([True, False]),), {}),
    ("mode", (np.array([], np.float64),), {}),
    ("quantile", (np.array([1, 2]), 0.5), {}),
    ("quantile", (np.ones(3), 1.5), {}),
    ("quantile", (np.ones(3), np.array([0.5], np.float32)), {}),
    ("quantile", (np.ones(3), np.ones((1, 1))), {}),
    ("quantile", (np.ones(3), 0.5), {"interpolation": "foo"}),
    ("quantile", (np.array([], np.float64), 0.5), {}),
    ("quantile", (np.ones(3), np.array([2.0])), {}),
    ("repeat_interleave", (np.ones(3), np.array([1, 2])), {}),
    ("repeat_interleave", (np.ones(3), np.array([1, -2, 1])), {}),
    ("repeat_interleave", (np.ones(3), -1), {}),
    ("repeat_interleave", (np.ones(3), np.array([[1]])), {}),
    ("repeat_interleave", (np.ones(3), np.array([1.0, 2, 3])), {}),
    ("repeat_interleave", (np.ones(3), np.array([1, 2, 3])), {"output_size": 5}),
    ("repeat_interleave", (np.ones(3), 2), {"output_size": 5}),
    ("repeat_interleave", (np.array([[1, 2]]),), {}),
    ("aminmax", (np.array([], np.float64),), {}),
    ("aminmax", (np.ones((2, 0)),), {"dim": 1}),
    ("nanmean", (np.array([1, 2]),), {}),
    ("std_mean", (np.array([1, 2]),), {}),
    ("trapezoid", (np.ones(3), np.ones(2)), {}),
    ("vander", (np.ones(3),), {"N": -1}),
    ("vander", (np.ones((2, 2)),), {}),
    ("cov", (np.ones((2, 2, 2)),), {}),
    ("cov", (np.ones(3),), {"fweights": np.ones(3)}),
    ("cov", (np.ones(3),), {"fweights": np.array([1, -1, 1])}),
    ("cov", (np.ones(3),), {"aweights": np.array([1, -1, 1.0])}),
    ("cov", (np.ones(3),), {"aweights": np.array([1, 1, 1])}),
]


@pytest.mark.parametrize("name,args,kwargs", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, args, kwargs):
    def call(lib, conv):
        a = [conv(x) if isinstance(x, np.ndarray) else x for x in args]
        k = {n: conv(v) if isinstance(v, np.ndarray) else v for n, v in kwargs.items()}
        try:
            getattr(lib, name)(*a, **k)
        except Exception as exc:  # noqa: BLE001 - compared below
            return exc
        raise AssertionError(f"{lib.__name__}.{name} did not raise")

    te, ee = call(torch, torch.tensor), call(eager, eager.tensor)
    assert type(ee) is type(te), (ee, te)
    if not isinstance(te, TypeError):
        assert str(ee).split("\n")[0] == str(te).split("\n")[0]


def test_cov_warns_like_torch():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        e = eager.cov(eager.tensor([1.0, 2.0, 3.0]), correction=3)
    assert math.isinf(e.item())


# -- threads, SyncBatchNorm, compile ----------------------------------------------------------

def test_num_threads():
    before = eager.get_num_threads()
    assert before >= 1
    eager.set_num_threads(1)
    assert eager.get_num_threads() == 1
    for bad in (0, -2):
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            eager.set_num_threads(bad)
    eager.set_num_threads(before)
    assert eager.get_num_threads() == before


def test_sync_batchnorm_single_process_like_torch():
    x = rnd(6, 3, 4, 2)
    e, t = eager.nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    xe, xt = eager.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    e.double()
    t.double()
    for _ in range(2):
        ye, yt = e(xe), t(xt)
        same(ye, yt, rtol=1e-10)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-10)
    same(e.running_mean, t.running_mean, rtol=1e-10)
    same(e.running_var, t.running_var, rtol=1e-10)
    assert int(e.num_batches_tracked) == int(t.num_batches_tracked)
    e.eval()
    t.eval()
    same(e(eager.tensor(x)), t(torch.tensor(x)), rtol=1e-10)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        e(eager.ones(3))


def test_convert_sync_batchnorm_like_torch():
    def build(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                             nn.Sequential(nn.BatchNorm1d(4, affine=False)))
    e = build(eager.nn)
    e[1].eval()
    bn, bn1 = e[1], e[2][0]
    ce = eager.nn.SyncBatchNorm.convert_sync_batchnorm(e)
    ct = torch.nn.SyncBatchNorm.convert_sync_batchnorm(build(torch.nn))
    assert [type(m).__name__ for m in ce.modules()] == [type(m).__name__ for m in ct.modules()]
    assert ce[1].weight is bn.weight and ce[1].running_mean is bn.running_mean
    assert not ce[1].training and ce[2][0].affine is False and ce[2][0].weight is None
    assert ce[2][0].num_batches_tracked is bn1.num_batches_tracked
    assert sorted(ce.state_dict()) == sorted(ct.state_dict())


def test_sync_batchnorm_several_ranks_refused(monkeypatch):
    import eager.nn.sync_batchnorm as sbn
    monkeypatch.setattr(sbn, "is_initialized", lambda: True)
    monkeypatch.setattr(sbn, "get_world_size", lambda group=None: 2)
    m = eager.nn.SyncBatchNorm(3)
    with pytest.raises(NotImplementedError, match="more than one process"):
        m(eager.ones(4, 3))
    m.eval()
    assert m(eager.ones(4, 3)).shape == (4, 3)


def test_compiled_function_with_new_names_equals_eager():
    import compiler

    def f(a, b, c):
        m = eager.addmm(c, a, b, alpha=0.5)
        return eager.logaddexp(m, eager.atan2(m, c)).sum() + eager.hypot(m, c).mean() \
            + eager.addcmul(c, m, m, value=0.1).sum()

    args = [eager.tensor(rnd(3, 4)), eager.tensor(rnd(4, 5)), eager.tensor(rnd(3, 5))]
    cf = compiler.compile(f)
    want = f(*args)
    for _ in range(3):
        got = cf(*args)
    compiler.wait()
    got = cf(*args)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
