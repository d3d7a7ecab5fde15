import os
import sys
import tempfile

import pytest

# Share compiled kernels across tests through one on-disk cache in a temporary directory.
os.environ.setdefault("DYNGRAPH_CACHE_DIR", tempfile.mkdtemp(prefix="dyngraph-test-cache-"))
# A stack the Python-state observer miscounts is a bug to see, not a silent eager fallback.
os.environ.setdefault("DYNGRAPH_CHECK_OBSERVER", "1")


@pytest.fixture(autouse=True)
def _no_background_builds_across_tests():
    """Fused kernels are built on a background thread: finish them inside the test that
    started them, so no build races with the next test's settings (cache dir, stats)."""
    yield
    tiers = sys.modules.get("compiler.tiers")
    if tiers is not None:
        tiers.wait()
