"""eager.Generator, the default generator, ``generator=`` on every random function, the
random ops' distributions and errors, and their compiled replay (same generator object on
every replay, restored when a replay fails a guard after drawing)."""

import pickle

import numpy as np
import pytest

import compiler
import eager
import eager.nn.functional as F
from eager import nn

# -- Generator --------------------------------------------------------------------------


def test_generator_seeding_semantics():
    g = eager.Generator()
    assert g.initial_seed() == 67280421310721          # PyTorch's seed of a new Generator
    assert g.device == eager.device("cpu")
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    a = eager.rand(4, generator=g)
    g.manual_seed(5)
    np.testing.assert_array_equal(eager.rand(4, generator=g).numpy(), a.numpy())
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1  # negatives wrap, as in PyTorch
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    assert isinstance(eager.initial_seed(), int)
    assert eager.manual_seed(7) is eager.default_generator
    assert eager.initial_seed() == 7


def test_generator_seed_errors_match_torch():
    torch = pytest.importorskip("torch")
    for bad in (2 ** 64, -2 ** 63 - 1, 1.5):
        with pytest.raises(Exception) as theirs:
            torch.Generator().manual_seed(bad)
        with pytest.raises(type(theirs.value)) as ours:
            eager.Generator().manual_seed(bad)
        assert str(ours.value) == str(theirs.value)
    assert eager.Generator().manual_seed(2 ** 64 - 1).initial_seed() == \
        torch.Generator().manual_seed(2 ** 64 - 1).initial_seed()


def test_get_state_set_state_roundtrip_and_errors():
    g = eager.Generator().manual_seed(11)
    eager.randn(3, generator=g)
    state = g.get_state()
    assert state.dtype == eager.uint8 and state.ndim == 1
    a = eager.randn(5, generator=g)
    assert g.set_state(state) is g
    np.testing.assert_array_equal(eager.randn(5, generator=g).numpy(), a.numpy())
    assert g.initial_seed() == 11
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(eager.zeros(3))
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
        g.set_state([1, 2])
    with pytest.raises(RuntimeError, match="input RNG state size to be 3"):
        g.set_state(eager.zeros(3, dtype=eager.uint8))
    # the default generator: get_rng_state / set_rng_state / fork_rng
    s = eager.get_rng_state()
    b = eager.rand(3)
    eager.set_rng_state(s)
    np.testing.assert_array_equal(eager.rand(3).numpy(), b.numpy())
    eager.set_rng_state(s)
    with eager.random.fork_rng():
        eager.rand(10)
    np.testing.assert_array_equal(eager.get_rng_state().numpy(), s.numpy())


def test_generator_pickles_with_its_state():
    g = eager.Generator().manual_seed(3)
    eager.rand(2, generator=g)
    h = pickle.loads(pickle.dumps(g))
    assert h.initial_seed() == 3
    np.testing.assert_array_equal(eager.rand(4, generator=h).numpy(),
                                  eager.rand(4, generator=g).numpy())


RANDOM_CALLS = {
    "rand": lambda g: eager.rand(3, 2, generator=g),
    "randn": lambda g: eager.randn(4, generator=g),
    "randint": lambda g: eager.randint(0, 100, (5,), generator=g),
    "randperm": lambda g: eager.randperm(9, generator=g),
    "rand_like": lambda g: eager.rand_like(eager.zeros(3), generator=g),
    "randn_like": lambda g: eager.randn_like(eager.zeros(3), generator=g),
    "randint_like": lambda g: eager.randint_like(eager.zeros(3), 10, generator=g),
    "bernoulli": lambda g: eager.bernoulli(eager.full((6,), 0.5), generator=g),
    "bernoulli_p": lambda g: eager.bernoulli(eager.zeros(6), 0.5, generator=g),
    "multinomial": lambda g: eager.multinomial(eager.ones(2, 5), 3, generator=g),
    "multinomial_repl": lambda g: eager.multinomial(eager.ones(5), 4, True, generator=g),
    "normal_tt": lambda g: eager.normal(eager.zeros(3), eager.ones(3), generator=g),
    "normal_ff": lambda g: eager.normal(0.0, 1.0, (3,), generator=g),
    "normal_": lambda g: eager.zeros(4).normal_(generator=g),
    "uniform_": lambda g: eager.zeros(4).uniform_(-1, 1, generator=g),
    "bernoulli_": lambda g: eager.zeros(4).bernoulli_(0.5, generator=g),
    "random_": lambda g: eager.zeros(4).random_(0, 50, generator=g),
    "exponential_": lambda g: eager.zeros(4).exponential_(generator=g),
    "init.uniform_": lambda g: nn.init.uniform_(eager.zeros(4), generator=g),
    "init.normal_": lambda g: nn.init.normal_(eager.zeros(4), generator=g),
    "init.kaiming_uniform_": lambda g: nn.init.kaiming_uniform_(eager.zeros(3, 4), generator=g),
    "init.xavier_normal_": lambda g: nn.init.xavier_normal_(eager.zeros(3, 4), generator=g),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_generator_argument_draws_only_from_that_generator(name):
    call = RANDOM_CALLS[name]
    eager.manual_seed(0)
    before = eager.get_rng_state().numpy()
    a = call(eager.Generator().manual_seed(42)).numpy()
    b = call(eager.Generator().manual_seed(42)).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(eager.get_rng_state().numpy(), before)  # untouched
    c = call(eager.Generator().manual_seed(43)).numpy()
    assert not np.array_equal(a, c)
    # without generator=, the default generator draws (and manual_seed reproduces it)
    eager.manual_seed(9)
    d = call(None).numpy()
    eager.manual_seed(9)
    np.testing.assert_array_equal(call(None).numpy(), d)
    assert not np.array_equal(eager.get_rng_state().numpy(), before)


def test_generator_argument_type_error():
    with pytest.raises(TypeError, match=r"rand\(\): argument 'generator' must be "
                                        r"torch.Generator, not int"):
        eager.rand(2, generator=3)
    with pytest.raises(TypeError, match="multinomial"):
        eager.multinomial(eager.ones(3), 1, generator="g")


# -- distributions ------------------------------------------------------------------------

def test_distributions_of_the_samplers():
    g = eager.Generator().manual_seed(0)
    n = 40000
    u = eager.rand(n, generator=g, dtype=eager.float64).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = eager.randn(n, generator=g).numpy()
    assert z.dtype == np.float32 and abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    b = eager.bernoulli(eager.full((n,), 0.3), generator=g).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    x = eager.zeros(n, dtype=eager.float64).normal_(2.0, 3.0, generator=g).numpy()
    assert abs(x.mean() - 2) < 0.06 and abs(x.std() - 3) < 0.06
    x = eager.zeros(n).uniform_(-2, 6, generator=g).numpy()
    assert x.min() >= -2 and x.max() < 6 and abs(x.mean() - 2) < 0.06
    x = eager.zeros(n, dtype=eager.float64).exponential_(4.0, generator=g).numpy()
    assert x.min() >= 0 and abs(x.mean() - 0.25) < 0.01
    x = eager.zeros(n, dtype=eager.int64).random_(3, 8, generator=g).numpy()
    assert set(np.unique(x)) == {3, 4, 5, 6, 7}
    x = eager.zeros(n, dtype=eager.uint8).random_(generator=g).numpy()
    assert x.min() == 0 and x.max() == 255
    p = eager.randperm(50, generator=g)
    assert p.dtype == eager.int64 and sorted(p.tolist()) == list(range(50))
    m = eager.normal(eager.tensor([0.0, 10.0], dtype=eager.float64).expand(n, 2),
                     eager.tensor([1.0, 0.5]), generator=g)
    assert m.dtype == eager.float64
    np.testing.assert_allclose(m.numpy().mean(0), [0, 10], atol=0.03)
    np.testing.assert_allclose(m.numpy().std(0), [1, 0.5], atol=0.03)


def test_multinomial_of_no_rows_is_empty():
    # PyTorch returns (0, k); np.stack of no rows raised ValueError
    for replacement in (True, False):
        out = eager.multinomial(eager.ones(0, 3), 2, replacement)
        assert tuple(out.shape) == (0, 2) and out.dtype == eager.int64


def test_multinomial_frequencies_with_and_without_replacement():
    g = eager.Generator().manual_seed(1)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    s = eager.multinomial(eager.tensor(p * 7), 20000, replacement=True, generator=g)
    assert s.dtype == eager.int64 and s.shape == (20000,)
    np.testing.assert_allclose(np.bincount(s.numpy(), minlength=4) / 20000, p, atol=0.012)
    # without replacement: rows are distinct; P(first = i) = p_i and
    # P(second = j | first = i) = p_j / (1 - p_i)
    rows = eager.multinomial(eager.tensor(np.tile(p, (20000, 1))), 2, generator=g).numpy()
    assert (rows[:, 0] != rows[:, 1]).all()
    np.testing.assert_allclose(np.bincount(rows[:, 0], minlength=4) / 20000, p, atol=0.012)
    second = np.bincount(rows[:, 1], minlength=4) / 20000
    want = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)]
    np.testing.assert_allclose(second, want, atol=0.012)
    # all categories without replacement: a permutation; zero weights come last
    full = eager.multinomial(eager.tensor([0.0, 1.0, 0.0, 2.0]), 4, generator=g).tolist()
    assert sorted(full) == [0, 1, 2, 3] and set(full[:2]) == {1, 3}


MULTINOMIAL_ERRORS = [
    ([1.0, 2.0], 0, False), ([1.0, 2.0], 3, False), ([[[1.0]]], 1, False),
    ([1, 2], 1, False), ([1.0, -2.0], 1, False), ([0.0, 0.0], 1, True),
    ([1.0, float("nan")], 1, False), ([[1.0, 0.0], [0.0, 0.0]], 1, True),
    ([1.0, float("inf")], 1, True),
]


@pytest.mark.parametrize("data,n,repl", MULTINOMIAL_ERRORS)
def test_multinomial_errors_match_torch(data, n, repl):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        torch.multinomial(torch.tensor(data), n, repl)
    with pytest.raises(type(theirs.value)) as ours:
        eager.multinomial(eager.tensor(data), n, repl)
    assert str(ours.value) == str(theirs.value)


ERRORS = [
    ("bernoulli p>1", lambda m: m.bernoulli(m.tensor([1.5]))),
    ("bernoulli long", lambda m: m.bernoulli(m.tensor([1, 0]))),
    ("bernoulli(p=2)", lambda m: m.bernoulli(m.tensor([0.5]), p=2.0)),
    ("bernoulli_", lambda m: m.zeros(2).bernoulli_(1.5)),
    ("uniform_", lambda m: m.zeros(2).uniform_(2, 1)),
    ("normal_ std", lambda m: m.zeros(2).normal_(0, -1)),
    ("normal std", lambda m: m.normal(m.zeros(2), -1.0)),
    ("normal tensor std", lambda m: m.normal(m.zeros(2), m.tensor([1.0, -1.0]))),
    ("normal_ long", lambda m: m.zeros(2, dtype=m.long).normal_()),
    ("exponential_", lambda m: m.zeros(2).exponential_(-1)),
    ("randperm", lambda m: m.randperm(-1)),
    ("leaf in-place", lambda m: m.zeros(2, requires_grad=True).uniform_()),
]


@pytest.mark.parametrize("name", [e[0] for e in ERRORS])
def test_random_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    call = dict(ERRORS)[name]
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(eager)
    assert str(ours.value).split(" (Could")[0] == str(theirs.value).split("  (Could")[0]


def test_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.randperm(4), lambda m: m.randint(0, 3, (2,)), lambda m: m.rand(2),
        lambda m: m.bernoulli(m.zeros(2, dtype=m.float64)),
        lambda m: m.multinomial(m.ones(3), 2),
        lambda m: m.normal(m.zeros(2, dtype=m.float64), m.ones(2)),
        lambda m: m.normal(2.0, 1.0, (2,)),
        lambda m: m.randint_like(m.zeros(2), 4),
    ]
    for c in cases:
        assert str(c(eager).dtype).split(".")[-1] == str(c(torch).dtype).split(".")[-1]


# -- compiled: the same generator object on every replay -------------------------------------

def _run(fn, gen, xs, seed):
    gen.manual_seed(seed)
    eager.manual_seed(seed + 1)
    return [fn(x).numpy().copy() for x in xs]


def test_compiled_random_ops_draw_from_the_generator_object():
    g = eager.Generator()

    def f(x):
        y = F.dropout(x, 0.3) + eager.rand(x.shape[1], generator=g)
        y = y * eager.randn(x.shape, generator=g) + eager.bernoulli(x.sigmoid(), generator=g)
        z = eager.zeros_like(x).normal_(1.0, 2.0, generator=g)
        return (y + z + eager.multinomial(x.abs() + 0.1, 2, generator=g).float().sum()).tanh()

    xs = [eager.tensor(np.linspace(-1, 1, 6).reshape(3, 2) * (k + 1)) for k in range(6)]
    want = _run(f, g, xs, 5)
    cf = compiler.compile(f)
    got = _run(cf, g, xs[:2], 5)
    compiler.wait()                                       # the Numba tier is built
    got += [cf(x).numpy().copy() for x in xs[2:]]
    # the same draws; fused tanh is within 2 ULP of NumPy's (docs/ARCHITECTURE-compiler.md)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)
    assert cf.stats()["hits"] >= 4
    again = _run(cf, g, xs, 5)                            # reseeding in place is seen
    for a, b in zip(again, want):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)


def test_compiled_guard_failure_restores_an_explicit_generator():
    g = eager.Generator()

    def f(x):
        r = eager.rand(3, generator=g)
        if x.sum() > 0:        # a guard after the draw: a failing replay drew already
            return x + r
        return x - r

    xs = [eager.ones(3), eager.ones(3), -eager.ones(3), eager.ones(3), -eager.ones(3)] * 2
    cf = compiler.compile(f)
    got = _run(cf, g, xs, 0)
    compiler.wait()
    got += [cf(x).numpy().copy() for x in xs]
    want = _run(f, g, xs + xs, 0)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert cf.stats()["guard_failures"] >= 1


def test_generator_passed_as_argument_to_a_compiled_function():
    def f(x, gen):
        return x + eager.randn(x.shape, generator=gen)

    cf = compiler.compile(f)
    g1, g2 = eager.Generator().manual_seed(1), eager.Generator().manual_seed(2)
    got = [cf(eager.zeros(4), g).numpy().copy() for g in (g1, g2, g1, g2, g1)]
    g1.manual_seed(1)
    g2.manual_seed(2)
    want = [f(eager.zeros(4), g).numpy().copy() for g in (g1, g2, g1, g2, g1)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_compiled_check_mode_restores_explicit_generators():
    """compile(check=True) reruns eager from the same state: the explicit generator too."""
    g = eager.Generator().manual_seed(7)

    def f(x):
        return x * eager.rand(x.shape, generator=g) + eager.randn(x.shape)

    cf = compiler.compile(f, check=True)
    outs = [cf(eager.ones(4)).numpy().copy() for _ in range(4)]   # CheckError if not
    assert cf.stats()["hits"] >= 2 and not np.array_equal(outs[2], outs[3])
