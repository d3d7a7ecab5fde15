"""Fixtures for the compiler tests: the backend parameter, clean global state around every
test (grad mode, tracer slot, logging topics, random seed), and the recompile log."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import compiler
import eager
from compiler import log as dlog
from eager._state import STATE

BACKENDS = ["eager", "python", "numba"]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Every compiler backend; "numba" uses the Python path until fusion lands."""
    return request.param


@pytest.fixture(params=["eager", "python"])
def fast_backend(request) -> str:
    """The backends that compile no kernels (for tests that loop many times)."""
    return request.param


@pytest.fixture(autouse=True)
def _clean_state():
    """Each test starts with grad mode on, no tracer, no log topics, a fixed seed."""
    STATE.grad_enabled = True
    STATE.tracer = None
    eager.manual_seed(0)
    yield
    STATE.grad_enabled = True
    STATE.inference = False
    STATE.tracer = None
    dlog.configure("")
    compiler.reset()


@pytest.fixture
def recompile_log(caplog):
    """``caplog`` with ``DYNGRAPH_LOG=recompiles`` switched on; yields a function that
    returns the recompile messages logged so far."""
    dlog.configure("recompiles")
    caplog.set_level(logging.INFO, logger="dyngraph.recompiles")

    def messages() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "dyngraph.recompiles"]

    yield messages
    dlog.configure("")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
