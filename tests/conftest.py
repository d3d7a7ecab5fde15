import os
import tempfile

# Share compiled kernels across tests through one on-disk cache in a temporary directory.
os.environ.setdefault("DYNGRAPH_CACHE_DIR", tempfile.mkdtemp(prefix="dyngraph-test-cache-"))
