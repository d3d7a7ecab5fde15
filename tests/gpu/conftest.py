"""CUDA tests run where CUDA tensors can be made: on a GPU, or in numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1``, as ``.ci/run`` does; ~170 us per simulated thread, so every
shape here is tiny)."""

import pytest

import eager
import eager.cuda.ops as cuda_ops


def pytest_collection_modifyitems(config, items):
    if eager.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA here (a GPU, or NUMBA_ENABLE_CUDASIM=1)")
    for item in items:
        if "tests/gpu/" in item.nodeid:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _on_device(request):
    """A test module naming ops in ``ON_DEVICE``: none of them went through the host
    fallback (``eager.cuda.ops.FALLBACK_CALLS``) in any of its tests."""
    ops = getattr(request.module, "ON_DEVICE", ())
    if not ops:
        yield
        return
    calls = cuda_ops.FALLBACK_CALLS
    before = {k: calls[k] for k in ops}
    yield
    assert {k: calls[k] for k in ops} == before, "an op went through the host fallback"


@pytest.fixture(autouse=True)
def _seed():
    eager.manual_seed(0)
    yield
    import compiler
    compiler.reset()
