"""The kernel disk cache seen through ``compile()``: a second Python process running the
same compiled function loads its kernels from ``DYNGRAPH_CACHE_DIR`` instead of building
them, and a corrupt cache entry is rebuilt (results stay right).  The mechanism itself is
tested in tests/runtime/test_cache.py; here each process is a real ``python`` subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json
    import sys

    import numpy as np

    import compiler
    import eager as torch
    from compiler import compile
    from eager.tensor import Tensor
    from runtime import cache

    BACKEND = sys.argv[1]


    def f(x, y):
        h = torch.sigmoid(torch.tanh(x * y + 1.0) * 0.5) - y
        return h, (h * h).sum()


    cf = compile(f, backend=BACKEND)
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((3, 4)).astype(np.float32)
    ya = rng.standard_normal(4).astype(np.float32)
    outs, grads = [], []
    for _ in range(3):
        x = torch.tensor(xa.copy(), requires_grad=True)
        y = torch.tensor(ya.copy())
        h, s = cf(x, y)
        s.backward()
        getattr(compiler, "wait", lambda: True)()  # later calls run the fused kernels
        outs.append(h._data.tolist())
        grads.append(x.grad._data.tolist())
    x = torch.tensor(xa.copy(), requires_grad=True)
    h, s = f(x, torch.tensor(ya.copy()))
    s.backward()

    # Numba's own cache: machine code loaded from disk (hits) or compiled (misses)
    hits = misses = 0
    for mods in getattr(cache, "_memory", {}).values():
        for mod in mods.values():
            for obj in vars(mod).values():
                st = getattr(obj, "stats", None)
                if st is not None and hasattr(st, "cache_hits"):
                    hits += sum(st.cache_hits.values())
                    misses += sum(st.cache_misses.values())

    e = cf.explain()
    print(json.dumps({
        "outs": outs, "grads": grads,
        "eager_out": h._data.tolist(), "eager_grad": x.grad._data.tolist(),
        "kernels": [name for name, _ in e.kernels],
        "cache": cache.cache_stats(),
        "numba_hits": hits, "numba_misses": misses,
        "stats": cf.stats(),
    }))
    """
)


def run(tmp_path: Path, cache_dir, backend: str = "numba") -> dict:
    script = tmp_path / "run_compiled.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["DYNGRAPH_CACHE_DIR"] = str(cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)  # keep Numba's files next to ours
    env.pop("DYNGRAPH_LOG", None)
    p = subprocess.run([sys.executable, str(script), backend], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, f"subprocess failed:\n{p.stdout}\n{p.stderr}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def check_results(r: dict) -> None:
    for out, grad in zip(r["outs"], r["grads"]):
        np.testing.assert_allclose(out, r["eager_out"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad, r["eager_grad"], rtol=1e-5, atol=1e-6)
    assert r["stats"]["hits"] == 2, r["stats"]


def need_kernels(r: dict) -> None:
    if not r["kernels"]:
        pytest.skip("backend 'numba' produced no kernels yet (explain().kernels is empty: "
                    "fusion has not landed), so there is nothing in the disk cache to test")


def entries(cache_dir: Path, pattern: str) -> list[Path]:
    return sorted(p for p in cache_dir.rglob(pattern) if p.is_file())


@pytest.fixture(scope="module")
def primed(tmp_path_factory):
    """One first process per module: its results and the cache directory it filled."""
    d = tmp_path_factory.mktemp("primed")
    first = run(d, d / "cache")
    return first, d / "cache"


@pytest.fixture
def warm(primed, tmp_path):
    """(first process's results, a private copy of the cache directory it filled)."""
    first, src = primed
    check_results(first)
    need_kernels(first)
    dst = tmp_path / "cache"
    shutil.copytree(src, dst)
    return first, dst


def test_second_process_loads_kernels_from_disk(warm, tmp_path):
    first, cache_dir = warm
    # written by the first process, or by the compile worker it started
    assert first["cache"]["builds"] >= 1 or entries(cache_dir, "*.done"), first["cache"]
    assert entries(cache_dir, "*.py"), "no kernel source written to the cache directory"

    second = run(tmp_path, cache_dir)
    check_results(second)
    assert second["kernels"] == first["kernels"]
    assert second["cache"]["disk_loads"] >= 1, second["cache"]
    assert second["cache"]["builds"] == 0, f"kernels rebuilt instead of loaded: " \
                                           f"{second['cache']}"
    assert second["cache"]["rebuilds"] == 0, second["cache"]
    if second["numba_hits"] + second["numba_misses"]:
        assert second["numba_misses"] == 0, "Numba recompiled instead of loading machine " \
                                            f"code from its cache: {second}"
    np.testing.assert_array_equal(second["outs"], first["outs"])
    np.testing.assert_array_equal(second["grads"], first["grads"])


def test_corrupt_source_entry_is_rebuilt(warm, tmp_path):
    first, cache_dir = warm
    sources = entries(cache_dir, "*.py")
    assert sources
    for p in sources:
        p.write_text("def broken(:\n    this is not python\n")

    second = run(tmp_path, cache_dir)
    check_results(second)
    np.testing.assert_allclose(second["outs"], first["outs"], rtol=1e-6)
    assert second["cache"]["builds"] + second["cache"]["rebuilds"] >= 1, second["cache"]
    for p in entries(cache_dir, "*.py"):  # rewritten: valid Python again
        compile(p.read_text(), str(p), "exec")

    third = run(tmp_path, cache_dir)
    check_results(third)
    assert third["cache"]["builds"] == 0 and third["cache"]["disk_loads"] >= 1, third["cache"]


def test_corrupt_numba_cache_files_are_repaired(warm, tmp_path):
    first, cache_dir = warm
    numba_files = entries(cache_dir, "*.nbi") + entries(cache_dir, "*.nbc")
    if not numba_files:
        pytest.skip("the kernels use no Numba on-disk cache (no .nbi/.nbc files)")
    for p in numba_files:
        p.write_bytes(b"\x00garbage" * 8)

    second = run(tmp_path, cache_dir)
    check_results(second)
    np.testing.assert_allclose(second["outs"], first["outs"], rtol=1e-6)


def test_truncated_source_entry_is_rebuilt(warm, tmp_path):
    first, cache_dir = warm
    for p in entries(cache_dir, "*.py"):
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2])
    second = run(tmp_path, cache_dir)
    check_results(second)
    np.testing.assert_allclose(second["outs"], first["outs"], rtol=1e-6)


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_processes_agree_and_match_eager(tmp_path, backend):
    """Runs today whatever the fusion backend does: two processes sharing a cache
    directory compute the same results, equal to eager's."""
    cache_dir = tmp_path / "cache"
    a = run(tmp_path, cache_dir, backend)
    b = run(tmp_path, cache_dir, backend)
    check_results(a)
    check_results(b)
    np.testing.assert_array_equal(a["outs"], b["outs"])
    np.testing.assert_array_equal(a["grads"], b["grads"])


def test_disk_cache_off(tmp_path):
    r = run(tmp_path, "off")
    check_results(r)
    assert r["cache"]["disk_loads"] == 0
    assert not list(tmp_path.rglob("*.nbi")), "Numba cache files written with the cache off"
