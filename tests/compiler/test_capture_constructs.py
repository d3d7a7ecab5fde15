"""Python constructs whose bytecode differs between CPython 3.11, 3.12 and 3.13, compiled:
each must replay (hits) and equal eager, with the observer's stack model checked on every
instruction (``DYNGRAPH_CHECK_OBSERVER=1``, set by tests/conftest.py).  CI runs this file on
all three versions."""

from __future__ import annotations

import numpy as np

import compiler
import eager as torch
from eager import nn

N = 5


def _run(f, make_args, min_hits=N - 2):
    cf = compiler.compile(f)
    for i in range(N):
        args = make_args(i)
        want = f(*args)
        got = cf(*args)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        if i == 1:
            compiler.wait()
    assert not cf.explain().always_eager, str(cf.explain())
    assert cf.stats()["hits"] >= min_hits, cf.stats()
    return cf


def _x(i):
    return (torch.arange(6.0).reshape(2, 3) + i,)


def test_a_long_body_with_extended_args_in_a_loop():
    # more than 256 constants/names: instructions carry EXTENDED_ARG, an event of its own
    # on 3.12+ (the observer must not run the extended instruction twice)
    consts = ", ".join(f"{k}.5" for k in range(300))
    src = (f"def f(x):\n    table = [{consts}]\n    for k in (1, 2):\n"
           "        x = x * table[k] + table[-k]\n    return x\n")
    ns = {}
    exec(src, ns)
    _run(ns["f"], _x)


class _Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        return x * self.scale


class _Child(_Base):
    def forward(self, x):
        return super().forward(x) + 1  # LOAD_SUPER_ATTR on 3.12+


def test_super_method_call():
    m = _Child()
    _run(m, _x)


def test_comprehensions_slices_fstrings_keywords_closures():
    weights = [0.5, 1.5, 2.5, 3.5]
    names = {"a": 1.0}

    def f(x):
        ws = [w * 2 for w in weights[1:3]]          # inline comprehension, BINARY_SLICE
        d = {k: v + 1 for k, v in names.items()}     # dict comprehension
        tag = f"{len(ws)}-{d['a']:.1f}"              # FORMAT_SIMPLE / FORMAT_WITH_SPEC
        scale = (lambda: ws[0] + d["a"])()           # a closure over the frame's cells
        y = torch.clamp(x, min=-1.0, max=10.0)       # CALL_KW on 3.13
        if tag.startswith("2") and not (x.shape[0] > 5):  # TO_BOOL, UNARY_NOT
            y = y * scale
        return y + sum(ws)

    _run(f, _x)


def test_state_read_through_a_slice_is_guarded():
    cfg = [1.0, 2.0, 3.0]

    def f(x):
        return x * sum(cfg[0:2])

    cf = compiler.compile(f)
    for i in range(N):
        if i == 3:
            cfg[1] = 5.0
        np.testing.assert_array_equal(cf(*_x(i)).numpy(), f(*_x(i)).numpy())
        if i == 1:
            compiler.wait()
    assert cf.stats()["hits"] >= 2


def test_loop_over_a_generator_and_try_except():
    def gen(n):
        for k in range(n):
            yield k * 0.5

    def f(x):
        for v in gen(3):  # 3.12 reports the StopIteration that ends the loop
            x = x + v
        try:
            {}["missing"]
        except KeyError:
            x = x * 2
        return x

    _run(f, _x)
