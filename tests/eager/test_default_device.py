"""``eager.set_default_device`` / ``get_default_device`` and ``with eager.device(...)``:
where factories put tensors when given no ``device=`` (per thread, as PyTorch's); on the
CPU here (the CUDA side: tests/gpu/test_device_api.py)."""

from __future__ import annotations

import threading

import pytest

import compiler
import eager

HAS_CUDA = eager.cuda.is_available()


def test_cpu_is_the_default_and_the_context_restores_it():
    assert eager.get_default_device() == eager.device("cpu")
    with eager.device("cpu") as d:
        assert d == eager.device("cpu")
        assert eager.zeros(2).device.type == "cpu"
        with eager.device("cpu"):
            assert eager.get_default_device() == eager.device("cpu")
    eager.set_default_device("cpu")
    assert eager.get_default_device() == eager.device("cpu")
    eager.set_default_device(None)
    assert eager.tensor([1.0]).device.type == "cpu"


@pytest.mark.skipif(HAS_CUDA, reason="needs a machine without CUDA")
def test_an_unusable_default_device_raises_at_the_first_factory_call():
    with eager.device("cuda"):
        assert eager.get_default_device() == eager.device("cuda", 0)
        for make in (lambda: eager.zeros(2), lambda: eager.tensor([1.0]),
                     lambda: eager.randn(2), lambda: eager.arange(3)):
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                make()
        t = eager.from_numpy(eager.zeros(2, device="cpu").numpy())   # always the CPU
        assert t.device.type == "cpu"
    assert eager.zeros(1).device.type == "cpu"                       # restored


def test_the_context_restores_after_an_exception_and_nests():
    d = eager.device("cpu")
    with pytest.raises(ValueError):
        with d:
            raise ValueError
    assert eager.get_default_device() == eager.device("cpu")
    with d, d:          # one object entered twice: each exit restores its own entry
        pass
    assert eager.get_default_device() == eager.device("cpu")


def test_the_default_device_is_per_thread():
    seen = []
    eager.set_default_device("cuda")
    try:
        t = threading.Thread(target=lambda: seen.append(eager.get_default_device()))
        t.start()
        t.join()
        assert eager.get_default_device() == eager.device("cuda", 0)
    finally:
        eager.set_default_device(None)
    assert seen == [eager.device("cpu")]


def test_compile_keys_on_the_default_device():
    """A trace recorded under one default device does not replay under another: its
    factories made tensors there (the key holds the default device)."""
    @compiler.compile(backend="python")
    def f(x):
        return x + eager.ones(2)

    f(eager.zeros(2))
    eager.set_default_device("cuda")
    try:
        with pytest.raises((AssertionError, RuntimeError)):
            f(eager.zeros(2, device="cpu"))   # eager's behaviour: ones() on the default device
    finally:
        eager.set_default_device(None)
    assert f.stats()["traces"] >= 1
    assert f(eager.zeros(2)).device.type == "cpu"
