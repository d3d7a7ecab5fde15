"""The workloads of /work/shared/BENCHMARKS.md, each for every implementation we can run.

A workload is a set of *implementations* (peers): a factory per peer that builds the
inputs/model and returns a zero-argument callable doing one unit of work (one GELU, one
train step, ...) and returning its result.  A factory raises :class:`Skip` when the peer
is not available (JAX not installed, torch.compile in ``--quick`` mode); any other
exception becomes an error in that peer's cell and the run goes on.

Before timing, every peer is called ``check_calls`` times (the first call of a compiled
function traces, the next ones replay) and its last result is compared with the NumPy
peer's (for train steps: the losses of every step from identical initial weights), so a
fast wrong answer is flagged.

Implementations (columns of the report):
    numpy          hand-written NumPy
    eager          dyngraph eager (``import eager``)
    compiled       dyngraph ``compiler.compile`` (backend ``numba``)
    torch          PyTorch eager
    torch.compile  PyTorch ``torch.compile`` (not in --quick: its first call takes seconds)
    jax            JAX ``jax.jit``
    copy / numba   references: ``np.copyto`` of the input (bandwidth limit), a hand-fused
                   Numba kernel using runtime.mathlib
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NUMPY, EAGER, COMPILED = "numpy", "eager", "compiled"
TORCH, TORCH_COMPILE, JAX = "torch", "torch.compile", "jax"
COPY, NUMBA = "copy", "numba fused"
IMPLS = [NUMPY, EAGER, COMPILED, TORCH, TORCH_COMPILE, JAX, COPY, NUMBA]

CHECK_CALLS = 2  # calls before timing whose results are checked (the 2nd replays a trace)

C0, C1 = 0.7978845608, 0.044715


class Skip(Exception):
    """This peer is not run here; the message says why."""


@dataclass
class Workload:
    key: str
    title: str
    impls: list                          # [(impl name, factory)]
    rtol: float = 1e-4
    atol: float = 1e-5
    reference: str = NUMPY
    check_calls: int = CHECK_CALLS
    stateful: bool = False               # each call changes state: compare every call
    notes: dict = field(default_factory=dict)   # impl -> note shown in JSON


# -- availability --------------------------------------------------------------------------

def _torch():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        raise Skip(f"torch not importable ({type(e).__name__})") from None
    return torch


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except Exception as e:  # noqa: BLE001
        raise Skip(f"JAX not installed ({type(e).__name__})") from None
    return jax, jnp


def _torch_compile(quick: bool):
    if quick:
        raise Skip("torch.compile skipped in --quick (first call takes seconds)")
    torch = _torch()
    return torch, torch.compile


def _eager():
    import eager
    return eager


def _compile():
    from compiler import compile
    return compile


def _with_stats(run, compiled):
    """Let the harness read the compiled function's counters (hits, fallbacks)."""
    run.stats = compiled.stats
    return run


def versions() -> dict:
    out = {"python": sys.version.split()[0], "numpy": np.__version__}
    for mod in ("numba", "torch", "jax", "matplotlib"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001
            out[mod] = None
    return out


# -- (a) GELU, tanh form -------------------------------------------------------------------

def gelu_np(x):
    return 0.5 * x * (1.0 + np.tanh(C0 * (x + C1 * x * x * x)))


def gelu_expr(tanh):
    """The same expression for every tensor library (x*x*x: NumPy's float32 ``x**3`` goes
    through powf and is ~15x slower than the whole GELU)."""
    def gelu(x):
        return 0.5 * x * (1.0 + tanh(C0 * (x + C1 * x * x * x)))
    return gelu


_fused_kernels = {}


def _numba_gelu():
    if "gelu" not in _fused_kernels:
        from numba import njit, prange

        from runtime.cpu import mathlib

        f32 = np.float32
        h, one, c0, c1 = f32(0.5), f32(1.0), f32(C0), f32(C1)

        @njit(parallel=True, cache=False)
        def gelu_par(x, out):
            for i in prange(x.size):
                v = x[i]
                out[i] = h * v * (one + mathlib.tanh(c0 * (v + c1 * v * v * v)))

        _fused_kernels["gelu"] = gelu_par
    return _fused_kernels["gelu"]


def gelu_workload(n: int, quick: bool) -> Workload:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32) * np.float32(3.0)

    def numpy_():
        return lambda: gelu_np(x_np)

    def eager_():
        eg = _eager()
        x = eg.from_numpy(x_np)
        f = gelu_expr(eg.tanh)
        return lambda: f(x)

    def compiled_():
        eg = _eager()
        x = eg.from_numpy(x_np)
        f = _compile()(gelu_expr(eg.tanh), backend="numba")
        return _with_stats(lambda: f(x), f)

    def torch_():
        torch = _torch()
        x = torch.from_numpy(x_np)
        f = gelu_expr(torch.tanh)
        return lambda: f(x)

    def torch_compile_():
        torch, tc = _torch_compile(quick)
        x = torch.from_numpy(x_np)
        f = tc(gelu_expr(torch.tanh))
        return lambda: f(x)

    def jax_():
        jax, jnp = _jax()
        x = jnp.asarray(x_np)
        f = jax.jit(gelu_expr(jnp.tanh))
        return lambda: f(x).block_until_ready()

    def copy_():
        out = np.empty_like(x_np)

        def run():
            np.copyto(out, x_np)
            # not a GELU: no check
        return run

    def numba_():
        k = _numba_gelu()
        out = np.empty_like(x_np)

        def run():
            k(x_np, out)
            return out
        return run

    label = f"{n // (1 << 20)}M" if n >= 1 << 20 else str(n)
    return Workload(
        f"gelu_{label.lower()}", f"GELU tanh {label} f32, no grad",
        [(NUMPY, numpy_), (EAGER, eager_), (COMPILED, compiled_), (TORCH, torch_),
         (TORCH_COMPILE, torch_compile_), (JAX, jax_), (COPY, copy_), (NUMBA, numba_)],
        rtol=1e-4, atol=2e-5,
        notes={NUMPY: "ufunc expression with temporaries",
               COPY: "np.copyto into a reused buffer (read+write bandwidth)",
               NUMBA: "hand-fused prange loop, runtime.mathlib.tanh"})


# -- (b) small chain, forward + backward ----------------------------------------------------

def chain_workload(quick: bool, n: int = 64, depth: int = 5) -> Workload:
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal(n, dtype=np.float32)

    def numpy_():
        f32 = np.float32
        a, b = f32(1.01), f32(0.1)

        def run():
            h = x_np
            ts = []
            for _ in range(depth):
                h = np.tanh(h * a + b)
                ts.append(h)
            g = np.ones_like(x_np)
            for t in reversed(ts):
                g = g * (1 - t * t) * a
            return g
        return run

    def chain(tanh):
        def f(x):
            for _ in range(depth):
                x = tanh(x * 1.01 + 0.1)
            return x
        return f

    def _step(lib):
        f = chain(lib.tanh)

        def step(x):
            x.grad = None
            loss = f(x).sum()
            loss.backward()
            return x.grad
        return step

    def eager_():
        eg = _eager()
        x = eg.tensor(x_np, requires_grad=True)
        step = _step(eg)
        return lambda: step(x)

    def compiled_():
        eg = _eager()
        x = eg.tensor(x_np, requires_grad=True)
        step = _compile()(_step(eg), backend="numba")
        return _with_stats(lambda: step(x), step)

    def torch_():
        torch = _torch()
        x = torch.tensor(x_np, requires_grad=True)
        step = _step(torch)
        return lambda: step(x)

    def torch_compile_():
        torch, tc = _torch_compile(quick)
        x = torch.tensor(x_np, requires_grad=True)
        f = tc(chain(torch.tanh))

        def run():
            x.grad = None
            f(x).sum().backward()
            return x.grad
        return run

    def jax_():
        jax, jnp = _jax()
        x = jnp.asarray(x_np)
        f = chain(jnp.tanh)
        vg = jax.jit(jax.value_and_grad(lambda x: f(x).sum()))

        def run():
            _, g = vg(x)
            return g.block_until_ready()
        return run

    return Workload(
        "chain", f"{depth}x tanh(x*1.01+0.1), {n} f32, fwd+bwd",
        [(NUMPY, numpy_), (EAGER, eager_), (COMPILED, compiled_), (TORCH, torch_),
         (TORCH_COMPILE, torch_compile_), (JAX, jax_)],
        rtol=1e-4, atol=1e-6,
        notes={NUMPY: "hand-written forward and backward",
               EAGER: "x.grad = None; f(x).sum().backward()",
               COMPILED: "the whole step (forward + backward into .grad) compiled",
               TORCH_COMPILE: "torch.compile(forward); .backward() through AOT autograd",
               JAX: "jit(value_and_grad)"})


# -- (c) MLP train step -----------------------------------------------------------------------

def mlp_workload(quick: bool, batch: int = 64, d_in: int = 784, d_h: int = 256,
                 d_out: int = 10, lr: float = 0.01) -> Workload:
    rng = np.random.default_rng(2)
    f32 = np.float32
    x_np = rng.standard_normal((batch, d_in), dtype=f32)
    y_np = rng.integers(0, d_out, batch).astype(np.int64)

    def init():
        r = np.random.default_rng(3)
        b1, b2 = 1 / np.sqrt(d_in), 1 / np.sqrt(d_h)
        return {"0.weight": r.uniform(-b1, b1, (d_h, d_in)).astype(f32),
                "0.bias": r.uniform(-b1, b1, d_h).astype(f32),
                "2.weight": r.uniform(-b2, b2, (d_out, d_h)).astype(f32),
                "2.bias": r.uniform(-b2, b2, d_out).astype(f32)}

    def numpy_():
        p = init()
        w1, b1, w2, b2 = p["0.weight"], p["0.bias"], p["2.weight"], p["2.bias"]
        rows = np.arange(batch)
        lr_ = f32(lr)
        inv_b = f32(1.0 / batch)

        def step():
            nonlocal w1, b1, w2, b2  # updated in place
            h = x_np @ w1.T
            h += b1
            a = np.maximum(h, 0)
            z = a @ w2.T
            z += b2
            z -= z.max(axis=1, keepdims=True)
            e = np.exp(z)
            s = e.sum(axis=1, keepdims=True)
            loss = -(z[rows, y_np] - np.log(s[:, 0])).mean()
            dz = e / s
            dz[rows, y_np] -= 1
            dz *= inv_b
            dw2 = dz.T @ a
            db2 = dz.sum(axis=0)
            da = dz @ w2
            da *= h > 0
            dw1 = da.T @ x_np
            db1 = da.sum(axis=0)
            w1 -= lr_ * dw1
            b1 -= lr_ * db1
            w2 -= lr_ * dw2
            b2 -= lr_ * db2
            return loss
        return step

    def _model(lib, nn, optim):
        model = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU(), nn.Linear(d_h, d_out))
        model.load_state_dict({k: lib.tensor(v) for k, v in init().items()})
        loss_fn = nn.CrossEntropyLoss()
        opt = optim.SGD(model.parameters(), lr=lr)

        def step(x, y):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return model, step

    def eager_():
        eg = _eager()
        from eager import nn, optim
        _, step = _model(eg, nn, optim)
        x, y = eg.tensor(x_np), eg.tensor(y_np)
        return lambda: step(x, y)

    def compiled_():
        eg = _eager()
        from eager import nn, optim
        _, step = _model(eg, nn, optim)
        cstep = _compile()(step, backend="numba")
        x, y = eg.tensor(x_np), eg.tensor(y_np)
        return _with_stats(lambda: cstep(x, y), cstep)

    def torch_():
        torch = _torch()
        _, step = _model(torch, torch.nn, torch.optim)
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
        return lambda: step(x, y)

    def torch_compile_():
        torch, tc = _torch_compile(quick)
        nn = torch.nn
        model = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU(), nn.Linear(d_h, d_out))
        model.load_state_dict({k: torch.tensor(v) for k, v in init().items()})
        cmodel = tc(model)
        loss_fn = nn.CrossEntropyLoss()
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)

        def step():
            opt.zero_grad()
            loss = loss_fn(cmodel(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    def jax_():
        jax, jnp = _jax()
        p = {k: jnp.asarray(v) for k, v in init().items()}
        x, y = jnp.asarray(x_np), jnp.asarray(y_np)

        def loss_fn(p, x, y):
            h = jax.nn.relu(x @ p["0.weight"].T + p["0.bias"])
            z = h @ p["2.weight"].T + p["2.bias"]
            logp = jax.nn.log_softmax(z, axis=1)
            return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

        @jax.jit
        def jstep(p, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g), loss

        state = {"p": p}

        def step():
            state["p"], loss = jstep(state["p"], x, y)
            return loss.block_until_ready()
        return step

    return Workload(
        "mlp", f"MLP {d_in}-{d_h}-{d_out} b{batch} train step",
        [(NUMPY, numpy_), (EAGER, eager_), (COMPILED, compiled_), (TORCH, torch_),
         (TORCH_COMPILE, torch_compile_), (JAX, jax_)],
        rtol=1e-3, atol=1e-5, check_calls=4, stateful=True,
        notes={NUMPY: "hand-written forward, cross-entropy, backward, SGD (in place)",
               EAGER: "nn.Sequential, CrossEntropyLoss, optim.SGD: zero_grad/fwd/backward/step",
               COMPILED: "the whole step (zero_grad, forward, backward, SGD) compiled",
               TORCH_COMPILE: "torch.compile(model); loss, backward, SGD eager",
               JAX: "jit(value_and_grad + SGD update)"})


# -- (d) cache-hit call of a compiled 1-op function -----------------------------------------

def cache_hit_workload(quick: bool) -> Workload:
    x_np = np.arange(4, dtype=np.float32)

    def one_op(x):
        return x + 1.0

    def numpy_():
        return lambda: one_op(x_np)

    def eager_():
        eg = _eager()
        x = eg.tensor(x_np)
        return lambda: one_op(x)

    def compiled_():
        eg = _eager()
        x = eg.tensor(x_np)
        f = _compile()(one_op, backend="numba")
        return _with_stats(lambda: f(x), f)

    def torch_():
        torch = _torch()
        x = torch.from_numpy(x_np)
        return lambda: one_op(x)

    def torch_compile_():
        torch, tc = _torch_compile(quick)
        x = torch.from_numpy(x_np)
        f = tc(one_op)
        return lambda: f(x)

    def jax_():
        jax, jnp = _jax()
        x = jnp.asarray(x_np)
        f = jax.jit(one_op)
        return lambda: f(x).block_until_ready()

    return Workload(
        "cache_hit", "1-op call x + 1, 4 f32 (cache hit)",
        [(NUMPY, numpy_), (EAGER, eager_), (COMPILED, compiled_), (TORCH, torch_),
         (TORCH_COMPILE, torch_compile_), (JAX, jax_)],
        rtol=0, atol=0,
        notes={COMPILED: "cache hit: key lookup, guards, replay, result wrap"})


# -- (e) first compiled call in a new process -----------------------------------------------

_OURS_CHILD = r"""
import time
t0 = time.perf_counter()
import json, sys
sys.path.insert(0, {root!r})
import eager as torch
from compiler import compile
t_import = time.perf_counter() - t0
x = torch.randn(1 << 20)
def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh({c0!r} * (x + {c1!r} * x * x * x)))
f = compile(gelu, backend="numba")
t1 = time.perf_counter()
f(x)              # traces (runs eagerly) and builds or loads the kernels
t_first = time.perf_counter() - t1
t2 = time.perf_counter()
f(x)              # the first call that runs compiled code (generated Python until the
t_second = time.perf_counter() - t2  # fused kernels, built in the background, are ready)
import compiler
compiler.wait()
t_ready = time.perf_counter() - t0
s = f.stats()
print(json.dumps({{"import": t_import, "first": t_first, "second": t_second,
                  "kernels_ready": t_ready,
                  "hits": s["hits"], "compile_seconds": s["compile_seconds"]}}))
"""

_TORCH_CHILD = r"""
import time
t0 = time.perf_counter()
import json
import torch
t_import = time.perf_counter() - t0
x = torch.randn(1 << 20)
def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh({c0!r} * (x + {c1!r} * x * x * x)))
f = torch.compile(gelu)
t1 = time.perf_counter()
f(x)
t_first = time.perf_counter() - t1
t2 = time.perf_counter()
f(x)
t_second = time.perf_counter() - t2
print(json.dumps({{"import": t_import, "first": t_first, "second": t_second}}))
"""


def _child(src: str, env: dict, timeout: float) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"child process failed: {tail}")
    line = proc.stdout.strip().splitlines()[-1]
    d = json.loads(line)
    d["wall"] = wall
    # the figure: imports + the call that traces/compiles + the first compiled call
    d["total"] = d["import"] + d["first"] + d["second"]
    return d


def first_call(quick: bool, on_progress=None) -> dict:
    """(e): impl -> result dict (``seconds``, ``cold``, details) or an exception / Skip."""
    out: dict = {}
    runs = 3 if quick else 5
    base_env = dict(os.environ)
    base_env["PYTHONPATH"] = ROOT + os.pathsep + base_env.get("PYTHONPATH", "")
    # ours: a fresh kernel cache dir, one cold run to fill it, then warm runs
    with tempfile.TemporaryDirectory(prefix="dyngraph-bench-cache-") as cache:
        env = dict(base_env, DYNGRAPH_CACHE_DIR=cache)
        src = _OURS_CHILD.format(root=ROOT, c0=C0, c1=C1)
        try:
            cold = _child(src, env, 300)
            warm = [_child(src, env, 300) for _ in range(runs)]
            warm.sort(key=lambda d: d["total"])
            med = warm[len(warm) // 2]
            out[COMPILED] = {"seconds": med["total"], "cold": cold["total"], "warm": med,
                             "cold_detail": cold, "runs": runs}
            if med["hits"] < 1:
                out[COMPILED]["check"] = "second call did not replay a compiled trace"
        except Exception as e:  # noqa: BLE001
            out[COMPILED] = e
    if on_progress:
        on_progress(COMPILED)
    try:
        _torch_compile(quick)
        with tempfile.TemporaryDirectory(prefix="inductor-bench-cache-") as cache:
            env = dict(base_env, TORCHINDUCTOR_CACHE_DIR=cache)
            src = _TORCH_CHILD.format(c0=C0, c1=C1)
            cold = _child(src, env, 600)
            warm = _child(src, env, 600)
            out[TORCH_COMPILE] = {"seconds": warm["total"], "cold": cold["total"],
                                  "warm": warm, "cold_detail": cold, "runs": 1}
    except Exception as e:  # noqa: BLE001 -- Skip included
        out[TORCH_COMPILE] = e
    try:
        _jax()
        out[JAX] = Skip("JAX first-call timing not implemented")
    except Skip as e:
        out[JAX] = e
    return out


def all_workloads(quick: bool) -> list:
    from .workloads_cuda import cuda_workloads  # CUDA rows: skipped without a GPU
    return [gelu_workload(1 << 20, quick), gelu_workload(32 << 20, quick),
            chain_workload(quick), mlp_workload(quick), cache_hit_workload(quick)] + \
        cuda_workloads(quick)
