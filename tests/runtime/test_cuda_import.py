"""``runtime.cuda`` imports with Numba's own ``numba.cuda`` as well as NVIDIA's numba-cuda
(the README's test environment has no CUDA extra: importing it must not fail there)."""

from __future__ import annotations

import sys


def test_cache_file_checks_skip_numbas_own_numba_cuda(monkeypatch):
    import runtime.cuda as rc
    monkeypatch.setitem(sys.modules, "numba.cuda.core.caching", None)  # not importable
    monkeypatch.setattr(rc, "_trusted_cuda_cache", False)
    rc._trust_cuda_cache_files()
    assert rc._trusted_cuda_cache is False
