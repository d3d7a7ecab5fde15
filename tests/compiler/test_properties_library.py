"""Property-based: random programs that use hooks, library objects with state, methods and
tensor metadata give the same results and leave the same state compiled as eager.

Two families of programs, each run in twin worlds (same seed, same changes between calls),
one eagerly and one compiled, over 5 to 8 calls with ``compiler.wait()`` after the second
(so later calls replay built kernels); after every call the outputs, gradients,
parameters, optimizer/scheduler/scaler state and the Python state the program writes must
be equal.

1. Training steps (``test_hooked_training_steps_match_eager``).  A two-layer model
   (``l1``, activation, ``l2``) trained by SGD (momentum) or Adam, compiled as

   - ``function``: the whole step (``zero_grad``, forward, ``backward``, ``step``) as a
     bound method passed to ``compile``;
   - ``method``: ``@compile`` on the step method of a plain class;
   - ``module``: ``compile(model)``, with backward and step outside;
   - ``forward``: ``@compile`` on ``nn.Module.forward`` of a subclass.

   Hooks are added and removed between calls at drawn call indices: ``register_hook`` on
   ``l1.weight`` scaling the gradient, ``register_post_accumulate_grad_hook`` on
   ``l2.bias`` (scaling ``.grad`` in place, or counting calls on the world), forward
   pre-hooks and forward hooks on the compiled module itself and on the submodules.
   Library effects inside the step: an LR scheduler's ``step()`` (StepLR, MultiStepLR,
   ExponentialLR, LambdaLR, CosineAnnealingLR), ``amp.GradScaler("cpu")``'s
   scale/step/update (with an overflowing batch at a drawn call), a buffer registered
   lazily (``if not hasattr(self, "ema"): self.register_buffer(...)``), counters and lists
   on ``self``, ``set_grad_enabled`` called as a function and restored, and
   ``xs.append(...)`` on a list argument that is new at every call.  Between calls the
   plan also changes instance-level state the compiled code reads (``model.scale``,
   ``model.flag``), the learning rate, the batch size and gradient accumulation.

2. Metadata and number branches (``test_metadata_and_number_branches_match_eager``).
   A function of ``(x, y, a)`` whose ``if``s read ``x.is_contiguous()``, ``x.stride()``,
   ``y.is_leaf``, ``isinstance(y, nn.Parameter)``, ``y.requires_grad`` and the type and
   sign of the number ``a``, called with ``x`` contiguous, transposed, sliced or expanded
   (a view of a base that may require grad), ``y`` a leaf, a non-leaf, a Parameter or a
   leaf requiring grad, and ``a`` drawn from ``0.0, -0.0, 1, 1.0, True, False, 2.5, -3``
   (``-0.0`` and ``0.0``, ``1``, ``1.0`` and ``True`` are different keys: results differ
   in sign and dtype), compiled as a function or as ``@compile`` on a method of a plain
   class whose attribute changes between calls.

Floats are compared bit for bit (signs of zeros and NaNs included) with
``backend="python"`` (the generated-Python tier computes eager's bits, README
"Exactness"); with ``backend="numba"`` within a tight tolerance, as a fused kernel's
transcendental is within a few ulp.  Python values are compared exactly, with their types.

Each test runs ``max_examples=10``; a soak runs more: ``DYNGRAPH_SOAK=200 python -m pytest
tests/compiler/test_properties_library.py`` (the number of examples per test).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
import eager as torch
from eager import nn

MAX_EXAMPLES = int(os.environ.get("DYNGRAPH_SOAK") or 10)
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])

#: numba backend: a fused kernel's tanh/exp is within 3 ulp of NumPy's, and a difference of
#: a few ulp in one step's gradient carries into the parameters of the later steps
RTOL, ATOL = 2e-5, 2e-6


# -- comparison ----------------------------------------------------------------------------

def _assert_arrays(got, want, exact, what):
    assert isinstance(got, np.ndarray), (what, type(got))
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (what, got.dtype, want.dtype, got.shape, want.shape)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaNs differ\n{got}\n{want}"
    if exact:
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same.all() and np.array_equal(np.signbit(got), np.signbit(want)), \
            f"{what}: not eager's bits (backend python)\ncompiled {got!r}\neager    {want!r}"
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True,
                                   err_msg=what)
        zeros = (want == 0) & (got == 0)
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), \
            f"{what}: signs of zeros differ"


def assert_same(got, want, exact, what):
    """``got`` (compiled world) equals ``want`` (eager world): tensors and arrays bit for bit
    when ``exact``, else within RTOL/ATOL; Python values exactly, types included."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor), (what, type(got))
        assert got.requires_grad == want.requires_grad, (what, "requires_grad")
        _assert_arrays(got.detach().numpy(), want.detach().numpy(), exact, what)
    elif isinstance(want, np.ndarray):
        _assert_arrays(got, want, exact, what)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (what, got, want)
        for k, (a, b) in enumerate(zip(got, want)):
            assert_same(a, b, exact, f"{what}[{k}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), (what, sorted(got), sorted(want))
        for k in want:
            assert_same(got[k], want[k], exact, f"{what}[{k!r}]")
    elif isinstance(want, float):
        assert type(got) is float, (what, got, want)
        if math.isnan(want):
            assert math.isnan(got), (what, got, want)
        elif exact:
            assert got == want and math.copysign(1, got) == math.copysign(1, want), \
                (what, got, want)
        else:
            assert math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL), (what, got, want)
    else:
        assert type(got) is type(want) and got == want, f"{what}: {got!r} != {want!r}"


def _array(t):
    return None if t is None else t.detach().numpy().copy()


# -- 1: training steps with hooks and library effects ---------------------------------------

HOOKS = ["grad", "post_grad", "post_count", "pre", "fwd", "sub_pre", "sub_fwd"]
MODEL_EFFECTS = ["ema", "counter", "grad_mode", "list_arg"]
STEP_EFFECTS = ["counter", "list_arg"]
SCHEDULERS = [None, "step", "multistep", "exp", "lambda", "cosine"]
PATTERNS = ["function", "method", "module", "forward"]
CHANGES = ["none", "none", "lr", "scale", "flag", "batch", "accumulate", "overflow"]


class Net(nn.Module):
    """``l2(act(l1(x)))`` with the drawn effects; ``scale`` and ``flag`` are instance state
    the plan changes between calls."""

    def __init__(self, act, effects):
        super().__init__()
        self.l1 = nn.Linear(3, 4)
        self.l2 = nn.Linear(4, 2)
        self.act = act
        self.effects = tuple(effects)
        self.scale = 1.0
        self.flag = True
        self.calls = 0
        self.seen = []

    def forward(self, x, xs):
        h = self.l1(x)
        h = torch.tanh(h) if self.act == "tanh" else torch.relu(h)
        h = h * self.scale if self.flag else h - self.scale
        if "grad_mode" in self.effects:
            torch.set_grad_enabled(False)
            side = h * 0.5           # no graph: no gradient flows through it
            torch.set_grad_enabled(True)
            h = h + side
        out = self.l2(h)
        if "ema" in self.effects:
            if not hasattr(self, "ema"):
                self.register_buffer("ema", out.detach().mean(0).clone())
            else:
                self.ema.mul_(0.75).add_(out.detach().mean(0) * 0.25)
            out = out - self.ema
        if "counter" in self.effects:
            self.calls += 1
            self.seen.append(self.calls)
            out = out * (self.calls % 2 + 1)
        if "list_arg" in self.effects:
            xs.append(x.shape[0])
            xs.append("fwd")
        return out


class CompiledForwardNets:
    """``@compile`` on ``Net.forward`` of a subclass, one class per backend."""
    cache: dict = {}

    @classmethod
    def get(cls, backend):
        if backend not in cls.cache:
            cls.cache[backend] = type(f"CompiledForwardNet_{backend}", (Net,), {
                "forward": compiler.compile(Net.forward, backend=backend, max_traces=6)})
        return cls.cache[backend]


def make_scheduler(name, opt):
    S = torch.optim.lr_scheduler
    if name == "step":
        return S.StepLR(opt, step_size=2, gamma=0.5)
    if name == "multistep":
        return S.MultiStepLR(opt, milestones=[1, 3], gamma=0.25)
    if name == "exp":
        return S.ExponentialLR(opt, gamma=0.9)
    if name == "lambda":
        return S.LambdaLR(opt, lambda e: 1.0 / (e + 1))
    if name == "cosine":
        return S.CosineAnnealingLR(opt, T_max=4)
    return None


class Trainer:
    """One world: model, optimizer, optional scheduler and scaler, hooks, loop flags."""

    def __init__(self, spec, compiled):
        torch.manual_seed(spec["seed"])
        net = CompiledForwardNets.get(spec["backend"]) \
            if compiled and spec["pattern"] == "forward" else Net
        effects = list(spec["model_effects"])
        if spec["pattern"] != "forward" and "list_arg" in effects:
            # KNOWN MISMATCH, kept out: a list argument that reaches the traced forward
            # through Module.__call__(*args) (or any tuple built in the call) is appended
            # to on a replay as the *first* call's list, and the new list stays empty
            # (test_a_list_argument_read_back_from_a_tuple_is_appended_to below).
            # With pattern "forward" the compiled frame gets the list itself.
            effects.remove("list_arg")
        self.model = net(spec["act"], effects)
        self.step_effects = tuple(spec["step_effects"])
        if spec["opt"] == "adam":
            self.opt = torch.optim.Adam(self.model.parameters(), lr=0.02)
        else:
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.5)
        self.sched = make_scheduler(spec["sched"], self.opt)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2) \
            if spec["scaler"] else None
        self.call = self.model
        if compiled and spec["pattern"] == "module":
            self.call = compiler.compile(self.model, backend=spec["backend"], max_traces=6)
        self.accumulate = False
        self.batch = 4
        self.overflow = False
        self.steps = 0
        self.history = []
        self.post_calls = 0
        self.handles = {}

    def step(self, x, y, xs):
        if not self.accumulate:
            self.opt.zero_grad()
        out = self.call(x, xs)
        loss = ((out - y) ** 2).mean()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        if self.sched is not None:
            self.sched.step()
        if "counter" in self.step_effects:
            self.steps += 1
            self.history.append(self.steps)
        if "list_arg" in self.step_effects:
            xs.append(len(xs))
        return loss

    # hooks, added and removed between calls
    def add_hook(self, kind):
        m = self.model
        if kind == "grad":
            h = m.l1.weight.register_hook(lambda g: g * 0.5)
        elif kind == "post_grad":
            def post(p):
                with torch.no_grad():
                    p.grad.mul_(2.0)
            h = m.l2.bias.register_post_accumulate_grad_hook(post)
        elif kind == "post_count":
            def count(p):
                self.post_calls += 1
            h = m.l2.bias.register_post_accumulate_grad_hook(count)
        elif kind == "pre":
            h = m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 0.5,) + inp[1:])
        elif kind == "fwd":
            h = m.register_forward_hook(lambda mod, inp, out: out + 1.0)
        elif kind == "sub_pre":
            h = m.l2.register_forward_pre_hook(lambda mod, inp: (inp[0] + 0.25,))
        else:
            h = m.l1.register_forward_hook(lambda mod, inp, out: out * 2.0)
        self.handles[kind] = h

    def change(self, what, i):
        self.overflow = False
        if what == "lr":
            for g in self.opt.param_groups:
                g["lr"] = g["lr"] * (0.5 + 0.25 * (i % 3))
        elif what == "scale":
            self.model.scale = 0.5 + 0.25 * i
        elif what == "flag":
            self.model.flag = not self.model.flag
        elif what == "batch":
            self.batch = 4 + 2 * (i % 2)
        elif what == "accumulate":
            self.accumulate = not self.accumulate
        elif what == "overflow":
            self.overflow = self.scaler is not None   # only a scaler recovers from it

    def data(self, i):
        rng = np.random.default_rng(100 + i)
        x = rng.standard_normal((self.batch, 3)).astype(np.float32)
        if self.overflow:
            x[0, 0] = np.inf
        y = rng.standard_normal((self.batch, 2)).astype(np.float32)
        return torch.tensor(x), torch.tensor(y)

    def state(self):
        m = self.model
        out = {"params": [_array(p) for p in m.parameters()],
               "grads": [_array(p.grad) for p in m.parameters()],
               "opt": [{k: (_array(v) if isinstance(v, torch.Tensor) else v)
                        for k, v in sorted(self.opt.state.get(p, {}).items())}
                       for p in m.parameters()],
               "lr": [g["lr"] for g in self.opt.param_groups],
               "buffers": {k: _array(b) for k, b in m.named_buffers()},
               "calls": m.calls, "seen": list(m.seen), "steps": self.steps,
               "history": list(self.history), "post_calls": self.post_calls,
               "grad_enabled": torch.is_grad_enabled()}
        if self.sched is not None:
            out["sched"] = (self.sched.last_epoch, list(self.sched.get_last_lr()))
        if self.scaler is not None:
            out["scaler"] = (self.scaler.get_scale(), self.scaler._growth_tracker)
        return out


def compiled_step(w, spec):
    """The compiled world's step for the pattern."""
    if spec["pattern"] == "function":
        return compiler.compile(w.step, backend=spec["backend"], max_traces=6)
    if spec["pattern"] == "method":
        cls = type("CompiledTrainer", (Trainer,), {
            "step": compiler.compile(Trainer.step, backend=spec["backend"], max_traces=6)})
        w.__class__ = cls
        return w.step
    return w.step   # module / forward: the model is compiled, the step runs eagerly


hook_events = st.lists(
    st.tuples(st.sampled_from(HOOKS), st.integers(0, 6), st.one_of(st.none(), st.integers(1, 7))),
    max_size=4, unique_by=lambda e: e[0])

train_specs = st.fixed_dictionaries({
    "seed": st.integers(0, 2 ** 16),
    "act": st.sampled_from(["tanh", "relu"]),
    "opt": st.sampled_from(["sgd", "adam"]),
    "sched": st.sampled_from(SCHEDULERS),
    "scaler": st.booleans(),
    "model_effects": st.lists(st.sampled_from(MODEL_EFFECTS), unique=True, max_size=4),
    "step_effects": st.lists(st.sampled_from(STEP_EFFECTS), unique=True, max_size=2),
    "pattern": st.sampled_from(PATTERNS),
    "backend": st.sampled_from(["python", "numba"]),
    "hooks": hook_events,
})


def run_training(spec, changes):
    we, wc = Trainer(spec, False), Trainer(spec, True)
    fe, fc = we.step, compiled_step(wc, spec)
    exact = spec["backend"] == "python"
    for i, what in enumerate(changes):
        for w in (we, wc):
            for kind, add_at, remove_at in spec["hooks"]:
                if i == add_at:
                    w.add_hook(kind)
                if kind in w.handles and remove_at is not None and i == max(remove_at, add_at + 1):
                    w.handles.pop(kind).remove()
            w.change(what, i)
        where = f"call {i} after {what!r}; changes {changes}; spec {spec}"
        xs_e, xs_c = [], []     # a new list argument at every call
        want = fe(*we.data(i), xs_e)
        got = fc(*wc.data(i), xs_c)
        assert_same(got, want, exact, f"loss of {where}")
        assert_same(xs_c, xs_e, exact, f"list argument of {where}")
        assert_same(wc.state(), we.state(), exact, f"state after {where}")
        assert torch.is_grad_enabled()
        if i == 1:
            compiler.wait()
    return wc, fc


@SETTINGS
@given(spec=train_specs, changes=st.lists(st.sampled_from(CHANGES), min_size=5, max_size=8))
def test_hooked_training_steps_match_eager(spec, changes):
    run_training(spec, changes)


def compiled_handle(wc, fc, spec):
    """The CompiledFunction whose stats tell how the compiled world's calls ran."""
    if spec["pattern"] == "module":
        return wc.call
    if spec["pattern"] == "forward":
        return type(wc.model).forward.__get__(wc.model)
    return fc


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_training_fuzzer_replays_compiled_code(pattern):
    """The fuzzer's programs must exercise replays, not only eager fallbacks: a step with
    hooks on the module, a submodule and a parameter, a lazily registered buffer, a counter,
    grad mode switched off and on, and a fresh list argument replays from its third call on
    (the first records; the second records again, as the buffer exists and the counter
    became a trace input)."""
    spec = dict(seed=3, act="tanh", opt="adam", sched=None, scaler=False,
                model_effects=["ema", "counter", "grad_mode", "list_arg"],
                step_effects=["list_arg"], pattern=pattern, backend="python",
                hooks=[("grad", 0, None), ("fwd", 0, None), ("sub_pre", 0, None),
                       ("post_grad", 0, None)])
    wc, fc = run_training(spec, ["none"] * 6)
    cf = compiled_handle(wc, fc, spec)
    stats = cf.stats()
    assert stats["hits"] >= 3, (stats, str(cf.explain()))


# -- 2: metadata and number branches ---------------------------------------------------------

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]
YKINDS = ["leaf", "nonleaf", "param", "leaf_rg"]
NUMBERS = [0.0, -0.0, 1, 1.0, True, False, 2.5, -3]
CHECKS = ["contiguous", "stride", "leaf", "param", "requires_grad", "mul", "type", "full",
          "arange", "div"]


def make_metadata_program(checks):
    def program(self, x, y, a):
        out = x * 2.0 + self.offset
        aux = []
        for c in checks:
            if c == "contiguous":
                out = out + 1.0 if x.is_contiguous() else out - 1.0
            elif c == "stride":
                if x.stride()[0] == 1:
                    out = out * 3.0
                out = out + x.stride()[1]
            elif c == "leaf":
                out = out * y if y.is_leaf else out + y
            elif c == "param":
                if isinstance(y, nn.Parameter):
                    out = out - y
            elif c == "requires_grad":
                out = out * 0.5 if y.requires_grad else out + 10.0
            elif c == "mul":
                out = out * a            # the sign of a zero is kept
            elif c == "type":
                if type(a) is bool:
                    out = out + 100.0
                elif isinstance(a, int):
                    out = out - 100.0
            elif c == "full":
                aux.append(torch.full((3,), a))      # bool, int64 or float32
            elif c == "arange":
                aux.append(torch.arange(3) * a)       # int64 for 1 and True, float for 1.0
            else:
                aux.append(torch.ones(3) / a)         # inf or -inf for 0.0, -0.0, False
        return out, aux
    return program


class Prog:
    """A plain class whose method is the program; ``offset`` changes between calls."""

    def __init__(self, fn):
        self.fn = fn
        self.offset = 0.5

    def run(self, x, y, a):
        return self.fn(self, x, y, a)


def metadata_args(i, layout, ykind, x_rg):
    rng = np.random.default_rng(7 + i)
    data = rng.standard_normal((3, 6)).astype(np.float32)
    base = torch.tensor(data[:, :3] if layout != "sliced" else data, requires_grad=x_rg)
    if layout == "contiguous":
        x = base
    elif layout == "transposed":
        x = base.t()
    elif layout == "sliced":
        x = base[:, ::2]
    else:
        x = base[0].expand(3, 3)
    yd = torch.tensor(rng.standard_normal((3, 3)).astype(np.float32))
    if ykind == "leaf":
        y = yd
    elif ykind == "nonleaf":
        y = yd.requires_grad_() * 1.0
    elif ykind == "param":
        y = nn.Parameter(yd)
    else:
        y = yd.requires_grad_()
    return base, x, y


calls = st.lists(st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(YKINDS),
                           st.sampled_from(NUMBERS), st.booleans(),
                           st.sampled_from([None, 0.5, -1.5])),
                 min_size=5, max_size=8)


@SETTINGS
@given(checks=st.lists(st.sampled_from(CHECKS), min_size=1, max_size=6), calls=calls,
       as_method=st.booleans(), backend=st.sampled_from(["python", "numba"]))
def test_metadata_and_number_branches_match_eager(checks, calls, as_method, backend):
    program = make_metadata_program(checks)
    pe, pc = Prog(program), Prog(program)
    if as_method:
        cls = type("CompiledProg", (Prog,), {
            "run": compiler.compile(Prog.run, backend=backend, max_traces=8)})
        pc.__class__ = cls
        fc = pc.run
    else:
        fc = compiler.compile(pc.run, backend=backend, max_traces=8)
    fe = pe.run
    exact = backend == "python"
    for i, (layout, ykind, a, x_rg, offset) in enumerate(calls):
        if offset is not None:       # instance state changed between calls
            pe.offset = pc.offset = offset
        where = f"call {i} ({layout}, {ykind}, a={a!r}, x_rg={x_rg}); checks {checks}, " \
                f"calls {calls}, method {as_method}"
        be, xe, ye = metadata_args(i, layout, ykind, x_rg)
        bc, xc, yc = metadata_args(i, layout, ykind, x_rg)
        want, got = fe(xe, ye, a), fc(xc, yc, a)
        assert_same(got, want, exact, f"outputs of {where}")
        if want[0].requires_grad:
            want[0].sum().backward()
            got[0].sum().backward()
        grads = [(_array(bc.grad), _array(be.grad))]
        if ykind in ("leaf_rg", "param"):
            grads.append((_array(yc.grad), _array(ye.grad)))
        for k, (g, w) in enumerate(grads):
            if w is None:
                assert g is None, (where, k)
            else:
                assert_same(g, w, exact, f"gradient {k} of {where}")
        if i == 1:
            compiler.wait()


# -- mismatches the fuzzer found, kept out of the random programs ---------------------------

@pytest.mark.regression("a list argument read back from a tuple built in the call "
                    "(Module.__call__(*args) builds one) was appended to on replays as the "
                    "first call's list")
def test_a_list_argument_read_back_from_a_tuple_is_appended_to():
    @compiler.compile(backend="python")
    def f(x, xs):
        t = (x, xs)              # as nn.Module.__call__(self, *args) -> self.forward(*args)
        t[1].append(1)
        return x * 2

    lists = [[], [], [], []]
    for xs in lists:             # a new list at every call: one key, replayed from call 2
        f(torch.ones(3), xs)
    assert lists == [[1], [1], [1], [1]]


@pytest.mark.regression("a module called with a list argument appended to call 0's list")
def test_a_list_argument_through_module_call_is_appended_to():
    class M(nn.Module):
        def forward(self, x, xs):
            xs.append(len(xs))
            return x * 2

    m = compiler.compile(M(), backend="python")
    lists = [[], [], [], []]
    for xs in lists:
        m(torch.ones(3), xs)
    assert lists == [[0], [0], [0], [0]]
