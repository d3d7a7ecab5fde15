"""Grad mode (and autocast) is per thread, as in PyTorch: ``no_grad`` in one thread, or the
engine turning grad mode off while it runs a backward, must not change what another
thread records; a new thread starts with grad mode on.  Anomaly mode is process-wide."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import eager as torch
from eager import nn
from tests.helpers import run_threads


def in_thread(fn):
    """``fn()`` run in a fresh thread; its result."""
    out = []
    run_threads(lambda: out.append(fn()))
    return out[0]


@pytest.fixture
def fast_switching():
    """Switch threads often, so that concurrent tests interleave many times."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def leaf():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


# -- grad mode is per thread ----------------------------------------------------------------

def test_new_thread_starts_with_grad_enabled():
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert in_thread(torch.is_grad_enabled)
        assert in_thread(lambda: (leaf() * 2).requires_grad)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled()
        assert in_thread(lambda: (torch.is_grad_enabled(),
                                  torch.is_inference_mode_enabled())) == (True, False)


def test_set_grad_enabled_call_is_per_thread():
    torch.set_grad_enabled(False)  # the plain call form: takes effect at once
    try:
        assert not torch.is_grad_enabled()
        assert in_thread(torch.is_grad_enabled)
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()

    def other():
        torch.set_grad_enabled(False)  # never undone: dies with its thread
        return torch.is_grad_enabled()

    assert in_thread(other) is False
    assert torch.is_grad_enabled()


def test_decorators_are_per_thread():
    @torch.no_grad()
    def off():
        return in_thread(torch.is_grad_enabled), torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def off2():
        return in_thread(torch.is_grad_enabled), torch.is_grad_enabled()

    @torch.enable_grad()
    def on():
        return torch.is_grad_enabled()

    assert off() == (True, False)
    assert off2() == (True, False)
    with torch.no_grad():
        assert on()
        assert in_thread(on)
        assert not torch.is_grad_enabled()


def test_no_grad_in_one_thread_does_not_affect_another():
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def quiet():
        with torch.no_grad():
            inside.set()
            assert checked.wait(10)
            seen["quiet"] = (leaf() * 2).requires_grad

    def busy():
        assert inside.wait(10)  # the other thread is inside no_grad now
        x = leaf()
        y = (x * x).sum()
        seen["busy"] = (torch.is_grad_enabled(), y.requires_grad)
        y.backward()
        seen["grad"] = x.grad._data.copy()
        checked.set()

    run_threads(quiet, busy)
    assert seen["busy"] == (True, True)
    assert seen["quiet"] is False
    np.testing.assert_array_equal(seen["grad"], [2.0, 4.0, 6.0])


def test_backward_in_one_thread_does_not_turn_grad_off_in_another():
    """The engine switches grad mode off while it runs a backward: only in its thread."""
    in_backward = threading.Event()
    done = threading.Event()
    seen = {}

    def backward_thread():
        x = leaf()
        y = x * 3

        def hook(g):  # runs inside the engine, with its grad mode switch on
            seen["engine"] = torch.is_grad_enabled()
            in_backward.set()
            assert done.wait(10)
            return g

        y.register_hook(hook)
        y.sum().backward()
        seen["after"] = torch.is_grad_enabled()
        seen["grad"] = x.grad._data.copy()

    def forward_thread():
        assert in_backward.wait(10)
        try:
            x = leaf()
            y = (x * x).sum()
            seen["forward"] = (torch.is_grad_enabled(), y.requires_grad)
            y.backward()  # a backward of its own while the other one is paused
            seen["fgrad"] = x.grad._data.copy()
        finally:
            done.set()

    run_threads(backward_thread, forward_thread)
    assert seen["engine"] is False
    assert seen["forward"] == (True, True)
    assert seen["after"] is True
    np.testing.assert_array_equal(seen["grad"], [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(seen["fgrad"], [2.0, 4.0, 6.0])


def test_no_grad_loop_beside_backward_loop(fast_switching):
    """One thread under no_grad and one training, interleaving many times."""
    stop = threading.Event()
    leaked = []

    def inference():
        w = leaf()
        while not stop.is_set():
            with torch.no_grad():
                if (w * 2).requires_grad:
                    leaked.append(1)

    def training():
        try:
            for _ in range(300):
                x = leaf()
                (torch.tanh(x) * x).sum().backward()
                want = np.tanh(x._data) + x._data * (1 - np.tanh(x._data) ** 2)
                np.testing.assert_allclose(x.grad._data, want, rtol=1e-6)
        finally:
            stop.set()

    run_threads(inference, training)
    assert not leaked


def test_autocast_is_per_thread():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("cpu")
        assert in_thread(lambda: torch.is_autocast_enabled("cpu")) is False
        a = torch.ones(2, 2)
        other = in_thread(lambda: (a @ a).dtype)
        assert (a @ a).dtype == torch.bfloat16
    assert other == torch.float32


def test_anomaly_mode_is_process_wide():
    enabled = torch.autograd.is_anomaly_enabled
    assert not enabled()
    with torch.autograd.detect_anomaly():
        assert in_thread(enabled) is True
    assert in_thread(enabled) is False
    torch.autograd.set_detect_anomaly(True)
    try:
        assert in_thread(enabled) is True
    finally:
        torch.autograd.set_detect_anomaly(False)
    assert not enabled()


# -- training in several threads ------------------------------------------------------------

def _mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 2))


def _data(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    return torch.tensor(x), torch.tensor(y)


def _train(model, data, steps=50):
    x, y = data
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():  # a no_grad block in every step, as evaluation code has
            losses.append(float(loss.detach()))
            assert not model(x).requires_grad
    return losses


def test_four_threads_train_like_sequential(fast_switching):
    seeds = range(4)
    want = [_train(_mlp(s), _data(s)) for s in seeds]
    models = [_mlp(s) for s in seeds]
    got = [None] * 4

    def worker(i):
        return lambda: got.__setitem__(i, _train(models[i], _data(i)))

    run_threads(*[worker(i) for i in seeds])
    for i in seeds:
        np.testing.assert_allclose(got[i], want[i], rtol=1e-6, err_msg=f"thread {i}")
    assert torch.is_grad_enabled()


def test_queue_callback_runs_at_the_end_of_its_own_threads_backward():
    from eager.autograd.engine import queue_callback
    queued = threading.Event()
    other_done = threading.Event()
    ran = []

    def first():
        x = leaf()
        y = x * 2

        def hook(g):
            queue_callback(lambda: ran.append("first"))
            queued.set()
            assert other_done.wait(10)  # the other thread's backward ends meanwhile
            return g

        y.register_hook(hook)
        y.sum().backward()
        ran.append("first backward returned")

    def second():
        assert queued.wait(10)
        try:
            x = leaf()
            (x * 3).sum().backward()
            ran.append("second backward returned")
        finally:
            other_done.set()

    run_threads(first, second)
    assert ran == ["second backward returned", "first", "first backward returned"]
