"""Property-based: random programs that read and write Python state, with the state mutated
between calls, give the same results and leave the same state compiled as eager.

A program is a chain of steps on a running tensor ``h``, each reading or writing a config
object: multiply by ``cfg.scale`` (a float), add ``cfg.opts[key]`` when the key is there,
branch on ``cfg.flag``, add every number of ``cfg.weights`` (a list), count calls
(``cfg.count += 1``, then scale by it), log to ``cfg.log``.  Between calls the plan changes
the state: a new scale, the flag toggled, a key added or removed, the list grown or one
item replaced.  Twin configs run eagerly and compiled; after every call both results and
both configs must be equal (``compiler.wait()`` after the second call, so fused kernels
run too).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import eager as torch

STEPS = ["scale", "opt", "flag", "weights", "count", "log"]
CHANGES = ["none", "scale", "flag", "add_key", "del_key", "grow", "replace", "count"]


class Cfg:
    def __init__(self):
        self.scale = 1.5
        self.flag = True
        self.opts = {"a": 0.25}
        self.weights = [0.5, -1.0]
        self.count = 0
        self.log = []

    def state(self):
        return (self.scale, self.flag, dict(self.opts), list(self.weights), self.count,
                list(self.log))


def make_program(steps, cfg):
    def program(x):
        h = x
        for s in steps:
            if s == "scale":
                h = h * cfg.scale
            elif s == "opt":
                if "b" in cfg.opts:
                    h = h + cfg.opts["b"]
                h = h - cfg.opts.get("a", 0.0)
            elif s == "flag":
                h = torch.tanh(h) if cfg.flag else torch.relu(h)
            elif s == "weights":
                for w in cfg.weights:
                    h = h + w
            elif s == "count":
                cfg.count += 1
                h = h * (cfg.count % 3 + 1)
            else:
                cfg.log.append(len(cfg.log))
        return h
    return program


def change(cfg, what, k):
    if what == "scale":
        cfg.scale = 0.5 + k
    elif what == "flag":
        cfg.flag = not cfg.flag
    elif what == "add_key":
        cfg.opts["b"] = float(k)
    elif what == "del_key":
        cfg.opts.pop("b", None)
    elif what == "grow":
        cfg.weights.append(0.125 * k)
    elif what == "replace":
        cfg.weights[0] = -0.25 * k
    elif what == "count":
        cfg.count += 5


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=6),
       changes=st.lists(st.sampled_from(CHANGES), min_size=3, max_size=6),
       backend=st.sampled_from(["python", "numba"]))
def test_programs_over_mutated_python_state_match_eager(steps, changes, backend):
    ce, cc = Cfg(), Cfg()
    fe, fc = make_program(steps, ce), make_program(steps, cc)
    cf = compiler.compile(fc, backend=backend)
    x = torch.tensor([0.5, -1.5, 2.0])
    for i, what in enumerate(changes):
        change(ce, what, i)
        change(cc, what, i)
        want, got = fe(x), cf(x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-6,
                                   err_msg=f"call {i} after {what}, steps {steps}")
        assert cc.state() == ce.state(), (i, what, steps)
        if i == 1:
            compiler.wait()
    assert not cf.explain().always_eager, str(cf.explain())
