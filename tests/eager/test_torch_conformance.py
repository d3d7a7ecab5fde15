"""Behaviours checked against PyTorch 2.13 side by side: the same exception type and
message (or one that starts with PyTorch's), the same warnings, shapes, values and
gradients.  Channel dropout, the softmax family's implicit-dim warning, ``Module.cuda``,
the recurrent cells' size checks, ``Flatten``/``Unflatten``, smooth L1 / Huber loss
parameters, ``GroupNorm``, transposed convolutions with a string padding, the random
factories, ``F.threshold_``, grouped-query attention, ``AdaptiveMaxPool3d`` and the
``nn.modules.*`` import paths."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

import eager
from tests.helpers import check_like_torch

torch = pytest.importorskip("torch")

LIBS = (eager, torch)


def _outcome(fn):
    """What ``fn()`` did: ("ok", result) or ("raise", exception), and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn())
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            out = ("raise", e)
    return out, [str(w.message) for w in caught]


def _text(s: str) -> str:
    return s.replace("torch.", "eager.")


def same_outcome(make, *, prefix=False, warns=True):
    """``make(lib)`` with eager and with torch: both raise the same exception type with the
    same message (``prefix``: ours starts with torch's), or both return results of the same
    shape; with ``warns`` also the same warning messages."""
    (ek, ev), ew = _outcome(lambda: make(eager))
    (tk, tv), tw = _outcome(lambda: make(torch))
    assert ek == tk, (ek, ev, tk, tv)
    if ek == "raise":
        assert type(ev) is type(tv), (type(ev), ev, type(tv), tv)
        if prefix:
            assert str(ev).startswith(str(tv)), (str(ev), str(tv))
        else:
            assert str(ev) == str(tv), (str(ev), str(tv))
    else:
        es = ev if isinstance(ev, (tuple, list)) else (ev,)
        ts = tv if isinstance(tv, (tuple, list)) else (tv,)
        assert [tuple(getattr(e, "shape", ())) for e in es] == \
            [tuple(getattr(t, "shape", ())) for t in ts]
    if warns:
        assert [_text(w) for w in ew] == [_text(w) for w in tw]
    return ev, tv


# -- 1. channel dropout ------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4,), (2, 3, 4, 5)])
def test_dropout1d_wrong_ndim_raises_like_torch(shape):
    msg, _ = same_outcome(lambda m: m.nn.functional.dropout1d(m.ones(*shape), 0.5))
    assert "1 spatial dimension," in str(msg) and "{" not in str(msg)
    same_outcome(lambda m: m.nn.Dropout1d()(m.ones(*shape)))


@pytest.mark.parametrize("cls,shape", [("Dropout3d", (2, 3)), ("Dropout3d", (4,)),
                                       ("Dropout3d", (2, 3, 4)), ("Dropout3d", (2,) * 6),
                                       ("Dropout2d", (2, 3)), ("Dropout2d", (2,) * 5),
                                       ("Dropout2d", (4,)), ("Dropout2d", (2, 3, 4))])
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_dropout2d_3d_other_ndim_warn_or_raise_like_torch(cls, shape, p):
    same_outcome(lambda m: getattr(m.nn, cls)(p)(m.ones(*shape)))
    same_outcome(lambda m: getattr(m.nn, cls)(p).eval()(m.ones(*shape)))


def test_dropout3d_2d_input_warns_and_names_its_spatial_dimensions():
    # the example of the report: PyTorch warns (deprecated) and drops rows
    _, ew = _outcome(lambda: eager.nn.Dropout3d()(eager.ones(2, 3)))
    _, tw = _outcome(lambda: torch.nn.Dropout3d()(torch.ones(2, 3)))
    assert ew == tw and "3 spatial dimensions" in ew[0] and "{nsp}" not in ew[0]


@pytest.mark.parametrize("fn,shape", [("dropout3d", (16, 9)), ("dropout3d", (16, 3, 4)),
                                      ("dropout3d", (4, 16, 2, 2, 2, 2)),
                                      ("dropout2d", (16, 9)), ("dropout2d", (4, 16, 2, 2, 2)),
                                      ("dropout1d", (16, 9)), ("dropout3d", (4, 16, 2, 2, 2))])
def test_channel_dropout_draws_along_the_dims_torch_does(fn, shape):
    def varying(m):
        m.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(m.nn.functional, fn)(m.ones(*shape), 0.5).numpy()
        return [d for d in range(y.ndim) if not (y == y.take([0], axis=d)).all()]
    assert varying(eager) == varying(torch)


# -- 2. softmax family: the implicit-dim warning -----------------------------------------

def _call(F, name, x, level):
    return getattr(F, name)(x, _stacklevel=level)


def _outer(F, name, x, level):
    return _call(F, name, x, level)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_implicit_softmax_dim_warning_uses_stacklevel_like_torch(name, level):
    def where(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = _outer(m.nn.functional, name, m.ones(2, 3), level)
        (w,) = caught
        here = w.filename == __file__
        own = w.filename == inspect.getsourcefile(getattr(m.nn.functional, name))
        return str(w.message), here, w.lineno if here else None, own, tuple(y.shape)
    ours, theirs = where(eager), where(torch)
    assert ours == theirs
    assert f"for {name} has been" in ours[0]


# -- 3. Module.cuda(device) --------------------------------------------------------------

def test_module_cuda_refuses_a_non_cuda_device_like_torch():
    same_outcome(lambda m: m.nn.Linear(2, 2).cuda("cpu"))
    same_outcome(lambda m: m.nn.Linear(2, 2).cuda(m.device("cpu")))
    for device in ("cpu", None, 0, 3):  # a module without tensors: nothing to move
        ours = eager.nn.ReLU()
        assert ours.cuda(device) is ours
        theirs = torch.nn.ReLU()
        assert theirs.cuda(device) is theirs


# -- 4. recurrent cells ------------------------------------------------------------------

def _cell_cases():
    cases = []
    for cls in ("RNNCell", "GRUCell", "LSTMCell"):
        lstm = cls == "LSTMCell"

        def h(m, *s, lstm=lstm):
            return (m.zeros(*s), m.zeros(*s)) if lstm else m.zeros(*s)
        cases += [
            (cls, lambda m: (m.zeros(2, 5), None)),
            (cls, lambda m: (m.zeros(5), None)),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 3, 3))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 1, 3))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 2, 5))),
            (cls, lambda m, h=h: (m.zeros(4), h(m, 5))),
            (cls, lambda m, h=h: (m.zeros(4), h(m, 1, 3))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 3))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 2))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 2, 3, 1))),
            (cls, lambda m, h=h: (m.zeros(2, 5), h(m, 3, 3))),
            (cls, lambda m, h=h: (m.zeros(2, 4), h(m, 2, 3))),
            (cls, lambda m, h=h: (m.zeros(4), h(m, 3))),
            (cls, lambda m, h=h: (m.zeros(0, 4), h(m, 0, 3))),
        ]
    z = "LSTMCell"
    cases += [
        (z, lambda m: (m.zeros(2, 4), (m.zeros(2, 3), m.zeros(3, 3)))),
        (z, lambda m: (m.zeros(2, 4), (m.zeros(2, 3), m.zeros(2, 5)))),
        (z, lambda m: (m.zeros(2, 4), (m.zeros(3, 3), m.zeros(2, 3)))),
        (z, lambda m: (m.zeros(4), (m.zeros(3), m.zeros(2, 3)))),
        (z, lambda m: (m.zeros(2, 4), (m.zeros(2, 3),))),
        (z, lambda m: (m.zeros(2, 4), m.zeros(2, 3))),
        (z, lambda m: (m.zeros(2, 4), (m.zeros(2, 3), m.zeros(2, 3, 1)))),
    ]
    return cases


@pytest.mark.parametrize("case", range(len(_cell_cases())))
def test_rnn_cells_check_sizes_like_torch(case):
    cls, args = _cell_cases()[case]

    def run(m):
        x, hx = args(m)
        return getattr(m.nn, cls)(4, 3)(x, hx)
    same_outcome(run)


# -- 5. Flatten / Unflatten --------------------------------------------------------------

FLATTEN = [
    lambda m: m.nn.Flatten(3)(m.zeros(2, 3)),
    lambda m: m.nn.Flatten(1, 5)(m.zeros(2, 3)),
    lambda m: m.nn.Flatten(-3)(m.zeros(2, 3)),
    lambda m: m.nn.Flatten()(m.zeros(2)),
    lambda m: m.nn.Flatten()(m.tensor(1.0)),
    lambda m: m.nn.Flatten(0)(m.tensor(1.0)),
    lambda m: m.nn.Flatten(-1)(m.tensor(1.0)),
    lambda m: m.nn.Flatten(1, 0)(m.zeros(2, 3)),
    lambda m: m.nn.Flatten(0, -1)(m.zeros(2, 3, 4)),
    lambda m: m.nn.Flatten(1, -2)(m.zeros(2, 3, 4, 5)),
    lambda m: m.nn.Unflatten(2, (1, 3))(m.zeros(2, 3)),
    lambda m: m.nn.Unflatten(-3, (1, 3))(m.zeros(2, 3)),
    lambda m: m.nn.Unflatten(1, (2, 3))(m.zeros(2, 3)),
    lambda m: m.nn.Unflatten(1, (3, -1))(m.zeros(2, 6)),
    lambda m: m.nn.Unflatten(-1, [3, 2])(m.zeros(2, 6)),
    lambda m: m.nn.Unflatten(1, m.Size([2, 3]))(m.zeros(2, 6)),
    lambda m: m.nn.Unflatten(1, 3),
    lambda m: m.nn.Unflatten(1, (1.5, 3)),
]


@pytest.mark.parametrize("case", range(len(FLATTEN)))
def test_flatten_unflatten_like_torch(case):
    same_outcome(FLATTEN[case])


def test_flatten_returns_the_input_and_unflatten_keeps_its_size_like_torch():
    for m in LIBS:
        x = m.zeros(2, 3)
        assert m.nn.Flatten()(x) is x and m.nn.Flatten(0, 0)(x) is x
    assert repr(eager.nn.Unflatten(1, [1, 3])) == repr(torch.nn.Unflatten(1, [1, 3]))


# -- 6. smooth L1 and Huber loss parameters ----------------------------------------------

LOSSES = [
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=-1.0),
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=-1),
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=float("nan")),
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=-1.0, reduction="none"),
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=-1.0, reduction="bogus"),
    lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=-0.0),
    lambda m, x, y: m.nn.SmoothL1Loss(beta=-1.0)(x, y),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=0.0),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=-1),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=float("nan")),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=-1.0, reduction="bogus"),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=-1.0, weight=m.ones(3)),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, weight=m.ones(1)),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, weight=m.ones(1), delta=-1.0),
    lambda m, x, y: m.nn.functional.huber_loss(x, y, weight=m.ones(3), reduction="bogus"),
    lambda m, x, y: m.nn.HuberLoss(delta=0.0)(x, y),
]


@pytest.mark.parametrize("case", range(len(LOSSES)))
def test_smooth_l1_and_huber_parameters_like_torch(case):
    same_outcome(lambda m: LOSSES[case](m, m.zeros(3), m.tensor([1.0, 0.2, 3.0])))


def test_smooth_l1_and_huber_values_like_torch():
    x, y = np.array([0.0, 0.5, 3.0]), np.array([0.2, 0.0, 0.0])
    for kw in ({"beta": 0.5}, {"beta": 0.0}, {"beta": 2.0, "reduction": "none"}):
        check_like_torch(eager.nn.functional.smooth_l1_loss, torch.nn.functional.smooth_l1_loss,
                         x, y, **kw)
    for kw in ({"delta": 0.5}, {"delta": 2.0, "reduction": "sum"}):
        check_like_torch(eager.nn.functional.huber_loss, torch.nn.functional.huber_loss,
                         x, y, **kw)
    check_like_torch(lambda a, b, w: eager.nn.functional.huber_loss(a, b, weight=w, delta=0.3),
                     lambda a, b, w: torch.nn.functional.huber_loss(a, b, weight=w, delta=0.3),
                     x, y, np.array([1.0, 2.0, 3.0]))


# -- 7. GroupNorm ------------------------------------------------------------------------

GROUP_NORM = [
    # PyTorch 2.13 does not check num_channels when affine=False: neither do we
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(2, 6, 3)),
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(2, 2, 3)),
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(2, 8)),
    lambda m: m.nn.GroupNorm(2, 4, affine=True)(m.ones(2, 6, 3)),
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(4)),
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(2, 3)),
    lambda m: m.nn.GroupNorm(1, 1, affine=False)(m.ones(1, 1)),
    lambda m: m.nn.GroupNorm(1, 1, affine=False).eval()(m.ones(1, 1, 1)),
    lambda m: m.nn.GroupNorm(2, 2)(m.ones(1, 2)),
    lambda m: m.nn.functional.group_norm(m.ones(1, 3), 2),
    lambda m: m.nn.GroupNorm(2, 4, affine=False)(m.ones(0, 4)),
]


@pytest.mark.parametrize("case", range(len(GROUP_NORM)))
def test_group_norm_checks_like_torch(case):
    same_outcome(GROUP_NORM[case])


def test_group_norm_without_affine_values_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 6, 3))
    check_like_torch(lambda t: eager.nn.GroupNorm(2, 4, affine=False)(t),
                     lambda t: torch.nn.GroupNorm(2, 4, affine=False)(t), x)


# -- 8. transposed convolutions with a string padding -------------------------------------

@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("padding", ["same", "valid", "bogus"])
def test_conv_transpose_string_padding_like_torch(nsp, padding):
    def cls(m):
        return getattr(m.nn, f"ConvTranspose{nsp}d")
    same_outcome(lambda m: cls(m)(2, 3, 3, padding=padding))          # taken, as PyTorch
    same_outcome(lambda m: cls(m)(2, 3, 3, padding=padding, stride=2))
    same_outcome(lambda m: cls(m)(2, 3, 3, padding=padding)(m.zeros((1, 2) + (4,) * nsp)))
    fn = f"conv_transpose{nsp}d"
    same_outcome(lambda m: getattr(m.nn.functional, fn)(
        m.zeros((1, 2) + (4,) * nsp), m.zeros((2, 3) + (3,) * nsp), padding=padding))


# -- 9. random factories -----------------------------------------------------------------

FACTORIES = [
    lambda m: m.rand_like(m.zeros(2, 3, dtype=m.int64)),
    lambda m: m.rand_like(m.zeros(2, dtype=m.int32)),
    lambda m: m.rand_like(m.zeros(2, dtype=m.bool)),
    lambda m: m.rand_like(m.zeros(2, dtype=m.uint8)),
    lambda m: m.randn_like(m.zeros(2, 3, dtype=m.int64)),
    lambda m: m.rand_like(m.zeros(2, 3, dtype=m.int64), dtype=m.float64),
    lambda m: m.rand_like(m.zeros(2, 3), dtype=m.int16),
    lambda m: m.randn_like(m.zeros(2, 3), dtype=m.int8),
    lambda m: m.rand(2, dtype=m.int64),
    lambda m: m.randn(2, dtype=m.bool),
    lambda m: m.rand(2, dtype=m.int64, requires_grad=True),
    lambda m: m.rand_like(m.zeros(2, 3), memory_format=m.preserve_format),
    lambda m: m.randn_like(m.zeros(2, 3), memory_format=m.contiguous_format),
    lambda m: m.rand_like(m.zeros(1, 2, 3, 4), memory_format=m.channels_last),
    lambda m: m.rand(size=(2, 3)),
    lambda m: m.randn(size=[2, 3]),
    lambda m: m.randn(size=()),
    lambda m: m.rand(2, layout=None, pin_memory=False),
    lambda m: m.rand_like(m.zeros(2), generator=m.Generator()),
    lambda m: m.randint(0, 5, (2,), requires_grad=False),
    lambda m: m.randint(5, 5, (2,), requires_grad=True),
    lambda m: m.randint(0, 5, (2,), dtype=m.float32, requires_grad=True),
    lambda m: m.randint_like(m.zeros(2, 3), 5, requires_grad=True),
]


@pytest.mark.parametrize("case", range(len(FACTORIES)))
def test_random_factories_like_torch(case):
    ours, theirs = same_outcome(FACTORIES[case])
    if not isinstance(theirs, Exception):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.requires_grad == theirs.requires_grad
        assert ours.is_leaf == theirs.is_leaf


@pytest.mark.parametrize("make", [
    lambda m: m.randint(0, 5, (2,), requires_grad=True),
    lambda m: m.randint_like(m.zeros(2, dtype=m.int64), 5, requires_grad=True),
    lambda m: m.randperm(3, requires_grad=True),
])
def test_integer_factories_refuse_requires_grad_like_torch(make):
    (ek, ev), _ = _outcome(lambda: make(eager))
    (tk, tv), _ = _outcome(lambda: make(torch))
    assert ek == tk == "raise" and type(ev) is type(tv) is RuntimeError
    assert "floating point" in str(ev) and "require gradients" in str(ev)


# -- 10. F.threshold_ --------------------------------------------------------------------

def test_threshold_inplace_takes_threshold_by_keyword_like_torch():
    outs = []
    for m in LIBS:
        x = m.tensor([-1.0, 0.5, 2.0])
        y = m.nn.functional.threshold_(x, threshold=0.5, value=-3.0)
        assert y is x
        outs.append(x.numpy().tolist())
    assert outs[0] == outs[1]
    assert list(inspect.signature(eager.nn.functional.threshold_).parameters) == \
        ["input", "threshold", "value"]            # torch's: threshold_(input, threshold, value)
    for m in LIBS:  # the old keyword is gone, as in PyTorch
        with pytest.raises(TypeError):
            m.nn.functional.threshold_(m.ones(2), threshold_=0.5, value=0.0)


# -- 11. grouped-query attention ---------------------------------------------------------

SDPA = [((1, 4, 3, 8), (1, 3, 3, 8), (1, 3, 3, 8)), ((1, 4, 3, 8), (1, 2, 3, 8), (1, 3, 3, 8)),
        ((1, 4, 3, 8), (1, 3, 3, 8), (1, 2, 3, 8)), ((4, 3, 8), (3, 3, 8), (3, 3, 8)),
        ((3, 8), (3, 8), (3, 8))]


@pytest.mark.parametrize("shapes", SDPA)
def test_gqa_head_errors_like_torch(shapes):
    msg, _ = same_outcome(lambda m: m.nn.functional.scaled_dot_product_attention(
        *[m.zeros(*s) for s in shapes], enable_gqa=True), prefix=True)
    if isinstance(msg, RuntimeError):  # PyTorch's stops at "heads in ": ours is finished
        assert "heads in query" in str(msg) and str(shapes[0][-3]) in str(msg)


@pytest.mark.parametrize("shapes", [((1, 4, 3, 8), (1, 2, 3, 8), (1, 1, 3, 8)),
                                    ((1, 4, 3, 8), (1, 4, 3, 8), (1, 2, 3, 8)),
                                    ((1, 4, 3, 8), (1, 2, 3, 8), (1, 4, 3, 8)),
                                    ((4, 3, 8), (2, 3, 8), (2, 3, 8))])
def test_gqa_values_and_gradients_like_torch(shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in shapes]
    check_like_torch(lambda q, k, v: eager.nn.functional.scaled_dot_product_attention(
                         q, k, v, enable_gqa=True),
                     lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                         q, k, v, enable_gqa=True), *arrays)


# -- 12. AdaptiveMaxPool3d ----------------------------------------------------------------

@pytest.mark.parametrize("shape,out", [((2, 3, 5, 6, 7), (2, 3, 4)), ((2, 3, 4, 6, 8), 2),
                                       ((3, 5, 3, 7), (5, 3, 7)),
                                       ((1, 2, 5, 6, 7), (None, 3, None)),
                                       ((1, 2, 5, 6, 7), 1), ((1, 1, 3, 3, 3), (4, 5, 2))])
def test_adaptive_max_pool3d_like_torch(shape, out):
    x = np.random.default_rng(5).standard_normal(shape)
    x[..., :2, :2, :2] = np.maximum(x[..., :2, :2, :2], 0.0)       # ties
    for ri in (False, True):
        check_like_torch(lambda t: eager.nn.functional.adaptive_max_pool3d(t, out, ri),
                         lambda t: torch.nn.functional.adaptive_max_pool3d(t, out, ri), x)
        check_like_torch(lambda t: eager.nn.AdaptiveMaxPool3d(out, return_indices=ri)(t),
                         lambda t: torch.nn.AdaptiveMaxPool3d(out, return_indices=ri)(t), x)


ADAPTIVE_ERRORS = [
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(2, 3), 2),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(1, 2, 3, 4, 5, 6), 2),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(2, 3, 4, 4, 4), (2, 3)),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(2, 3, 0, 4, 4), 2),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(0, 3, 4, 4, 4), 2),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(1, 1, 2, 2, 2, dtype=m.int64), 1),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(1, 1, 2, 2, 2, dtype=m.bool), 1),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.zeros(2, 3, 4, 4, 4), (2, 3, 0), True),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.zeros(2, 3, 4, 4, dtype=m.int64), 1),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.zeros(2, 3, 4, 4), (0, 2)),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.zeros(2, 3, 4, 4), (2, 2, 2)),
    lambda m: m.nn.functional.adaptive_max_pool1d(m.zeros(2, 3, 4, dtype=m.int32), 1),
]


@pytest.mark.parametrize("case", range(len(ADAPTIVE_ERRORS)))
def test_adaptive_max_pool_errors_like_torch(case):
    same_outcome(ADAPTIVE_ERRORS[case])


def test_adaptive_max_pool3d_repr_and_autocast_like_torch():
    for out, ri in (((2, None, 3), False), (2, True)):
        assert repr(eager.nn.AdaptiveMaxPool3d(out, ri)) == \
            repr(torch.nn.AdaptiveMaxPool3d(out, ri))
    dts = []
    for m in LIBS:
        with m.autocast("cpu", dtype=m.bfloat16):
            dts.append(str(m.nn.functional.adaptive_max_pool3d(
                m.ones(1, 1, 2, 2, 4, dtype=m.bfloat16), 1).dtype).split(".")[-1])
    assert dts[0] == dts[1] == "float32"


# -- nn.modules.* import paths -----------------------------------------------------------

def test_nn_modules_mirror_torch_import_paths():
    import torch.nn.modules as tmodules
    missing = []
    for info in pkgutil.iter_modules(tmodules.__path__):
        names = getattr(importlib.import_module(f"torch.nn.modules.{info.name}"), "__all__", ())
        try:
            ours = importlib.import_module(f"eager.nn.modules.{info.name}")
        except ImportError:
            ours = None
        missing += [f"{info.name}.{n}" for n in names
                    if hasattr(eager.nn, n) and not hasattr(ours, n)]
    assert missing == []
    from eager.nn.modules.pooling import AdaptiveMaxPool3d
    from eager.nn.modules.rnn import RNNCellBase
    assert AdaptiveMaxPool3d is eager.nn.AdaptiveMaxPool3d
    assert RNNCellBase is eager.nn.RNNCellBase
    assert issubclass(eager.nn.LSTMCell, RNNCellBase)
    assert list(inspect.signature(eager.nn.RNNCellBase).parameters) == \
        list(inspect.signature(torch.nn.RNNCellBase).parameters)
