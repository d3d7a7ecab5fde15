"""The peers (implementations) a workload is timed for, and whether they are installed.

A peer's name is its column in the tables.  ``numpy`` is hand-written NumPy; ``eager``,
``compiled`` and ``compiled fwd`` are ours; ``torch``, ``torch.compile`` and ``jax`` are
the other libraries, run when importable; ``copy`` and ``numba fused`` are reference
limits (memory bandwidth, a hand-fused kernel), not libraries anyone would use.
"""

from __future__ import annotations

import importlib
import sys

NUMPY, EAGER, COMPILED, COMPILED_FWD = "numpy", "eager", "compiled", "compiled fwd"
TORCH, TORCH_COMPILE, JAX = "torch", "torch.compile", "jax"
COPY, NUMBA = "copy", "numba fused"
ALL = [NUMPY, EAGER, COMPILED, COMPILED_FWD, TORCH, TORCH_COMPILE, JAX, COPY, NUMBA]

OURS = (EAGER, COMPILED, COMPILED_FWD)
OTHERS = (NUMPY, TORCH, TORCH_COMPILE, JAX)      # what a user would pick instead of us
REFERENCES = (COPY, NUMBA)

HEADERS = {NUMPY: "NumPy", EAGER: "ours eager", COMPILED: "ours compiled",
           COMPILED_FWD: "ours compiled fwd", TORCH: "PyTorch eager",
           TORCH_COMPILE: "torch.compile", JAX: "JAX jit", COPY: "copy (limit)",
           NUMBA: "Numba fused (limit)"}

INSTALL = {
    "matplotlib": 'pip install -e ".[bench]"',
    "torch": "pip install torch",
    "jax": "pip install jax jaxlib",
}


class Skip(Exception):
    """This peer is not run here; the message says why."""


def need(module: str):
    """Import ``module`` or raise :class:`Skip` naming how to install it."""
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 -- a broken install is "not available" too
        hint = INSTALL.get(module.split(".")[0])
        raise Skip(f"{module} not importable ({type(e).__name__})"
                   + (f"; {hint}" if hint else "")) from None


def torch():
    return need("torch")


def jax():
    """``(jax, jax.numpy)``."""
    return need("jax"), need("jax.numpy")


def torch_compile(quick: bool):
    """``(torch, torch.compile)``; skipped in ``--quick`` (its first call takes seconds)."""
    if quick:
        raise Skip("torch.compile is not run in --quick (its first call takes seconds)")
    t = torch()
    return t, t.compile


def versions() -> dict:
    """Installed versions (from package metadata: nothing is imported)."""
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for dist in ("numpy", "numba", "torch", "jax", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out
