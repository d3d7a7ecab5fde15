import os
import re
import sys
import tempfile

import pytest

# Share compiled kernels across tests through one on-disk cache in a temporary directory.
os.environ.setdefault("DYNGRAPH_CACHE_DIR", tempfile.mkdtemp(prefix="dyngraph-test-cache-"))
# A stack the Python-state observer miscounts is a bug to see, not a silent eager fallback.
os.environ.setdefault("DYNGRAPH_CHECK_OBSERVER", "1")

# A test file that compares with PyTorch (``pytest.importorskip("torch")`` or ``import torch``)
# gets the ``parity`` marker on all its tests: ``pytest -m parity`` runs them (CI does, in a
# venv with the ``parity`` extra) and then refuses to start without torch.
_USES_TORCH = re.compile(r"""importorskip\(["']torch["']\)|^\s*(import|from) torch\b""", re.M)
_uses_torch_cache = {}


def pytest_configure(config):
    markexpr = config.getoption("markexpr", "") or ""
    if re.search(r"\bparity\b", markexpr) and not re.search(r"not\s+parity", markexpr):
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise pytest.UsageError(
                "-m parity runs the PyTorch comparisons, but torch does not import "
                f"({e}); install the extra: pip install -e '.[test,parity]'") from e


def _file_uses_torch(path):
    key = str(path)
    if key not in _uses_torch_cache:
        try:
            with open(key, encoding="utf-8") as f:
                _uses_torch_cache[key] = bool(_USES_TORCH.search(f.read()))
        except OSError:
            _uses_torch_cache[key] = False
    return _uses_torch_cache[key]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _file_uses_torch(item.path):
            item.add_marker(pytest.mark.parity)


@pytest.fixture(autouse=True)
def _no_background_builds_across_tests():
    """Fused kernels are built on a background thread: finish them inside the test that
    started them, so no build races with the next test's settings (cache dir, stats)."""
    yield
    tiers = sys.modules.get("compiler.tiers")
    if tiers is not None:
        tiers.wait()
