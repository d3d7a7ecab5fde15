"""A new process whose kernel cache an earlier process filled runs a trace's fused kernels
from its first replay: no hold of ``tiers.FIRST_LOAD_AFTER``, no compile worker, nothing
built in the background (``compiler/tiers.py``: ``warm``).  Each process is a real Python
subprocess on one ``DYNGRAPH_CACHE_DIR``; results equal eager's in every process, also when
the cache's files were corrupted or removed in between.  No timing is asserted."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from runtime.cache import note_key
from tests.graphs import trace

REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json

    import compiler
    import eager as torch
    from compiler import tiers
    from eager import nn
    from runtime import cache
    from runtime.cpu import compile_worker


    def make():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
        return model, torch.optim.Adam(model.parameters(), lr=0.01)


    x = torch.randn(8, 5)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    b = torch.linspace(-1.0, 1.0, 6)
    model, opt = make()


    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss


    def g(a, b):   # differentiated outside: a compiled backward program too
        h = torch.sigmoid(a * b + 1.0)
        return (h * h).sum()


    cs, cg = compiler.compile(step), compiler.compile(g)
    losses, gvals, ggrads = [], [], []
    for _ in range(3):   # a trace before the optimizer's state, one after, a replay
        losses.append(cs(x, y).item())
    step_first = cs.explain(wait=False).traces[1]
    for _ in range(2):   # a trace, a replay
        a = torch.linspace(-2.0, 2.0, 6).requires_grad_()
        out = cg(a, b)
        out.backward()
        gvals.append(out.item())
        ggrads.append(a.grad.tolist())
    g_first = cg.explain(wait=False).traces[0]
    first = {"step_python_replays": step_first["python_replays"],
             "step_kernels": len(step_first["kernels"]),
             "g_python_replays": g_first["python_replays"],
             "g_kernels": len(g_first["kernels"]),
             "worker_started": compile_worker._proc is not None,
             "pending": tiers.pending()}
    compiler.wait()
    losses += [cs(x, y).item() for _ in range(2)]

    # the same calls eagerly
    model, opt = make()
    want = [step(x, y).item() for _ in range(5)]
    a = torch.linspace(-2.0, 2.0, 6).requires_grad_()
    out = g(a, b)
    out.backward()
    print(json.dumps({
        "first": first, "losses": losses, "want": want, "gvals": gvals, "ggrads": ggrads,
        "g_want": out.item(), "g_grad_want": a.grad.tolist(),
        "kernels": [len(t["kernels"]) for t in cs.explain().traces],
        "stats": cs.stats(), "cache": cache.cache_stats(),
    }))
    """
)


def _run(cache_dir: Path) -> dict:
    env = dict(os.environ, DYNGRAPH_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH"))
                                        if p)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check_results(r: dict) -> None:
    np.testing.assert_allclose(r["losses"], r["want"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r["gvals"], [r["g_want"]] * 2, rtol=1e-5)
    for grad in r["ggrads"]:
        np.testing.assert_allclose(grad, r["g_grad_want"], rtol=1e-5, atol=1e-7)
    assert r["kernels"][1] > 0, r["kernels"]   # the replayed trace runs fused kernels


def test_a_second_process_runs_cached_kernels_from_the_first_replay(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    cold = _run(cache_dir)
    _check_results(cold)

    warm = _run(cache_dir)
    _check_results(warm)
    first = warm["first"]
    # the kernels were swapped in before the first replay ran: no replay as Python
    assert first["step_python_replays"] == 0, first
    assert first["g_python_replays"] == 0, first
    assert first["step_kernels"] > 0 and first["g_kernels"] > 0, first
    # nothing to compile: no worker, nothing left for the background thread
    assert not first["worker_started"], first
    assert first["pending"] == 0, first
    assert warm["cache"]["disk_loads"] > 0 and warm["cache"]["builds"] == 0, warm["cache"]
    assert warm["stats"]["hits"] == cold["stats"]["hits"]


def test_corrupt_or_missing_cache_files_never_give_a_wrong_answer(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    _check_results(_run(cache_dir))

    # Numba's data files corrupted (their content no longer matches its record): the
    # first replay still loads at once, finds them untrusted and compiles instead
    data = sorted((cache_dir / "__pycache__").glob("*.nbc"))
    assert data
    for p in data:
        p.write_bytes(b"\0" * 64 + p.read_bytes()[64:])
    r = _run(cache_dir)
    _check_results(r)
    assert r["cache"]["numba_repairs"] > 0, r["cache"]

    # a kernel module removed: the trace is no longer "warm" and builds as a cold one
    modules = sorted(cache_dir.glob("dgk_*.py"))
    assert modules
    modules[0].unlink()
    r = _run(cache_dir)
    _check_results(r)
    # and a note planted next to the cache, naming files that exist, changes nothing
    # about the values (a note only says when to load; nothing in it is run)
    for note in (cache_dir / "loaded").iterdir():
        note.write_text(str(modules[1]) + "\n")
    r = _run(cache_dir)
    _check_results(r)


def test_warm_notes_are_keyed_on_the_code_generation_source(monkeypatch):
    """An edit to code generation must not reuse the old code's decisions: the note key
    holds a hash of compiler/codegen, compiler/passes and compiler/ir.py."""
    from compiler import source_tag, tiers
    assert len(source_tag.SOURCE_TAG) == 16
    before = tiers._warm_key(("graph",), {}, [])
    monkeypatch.setattr(tiers, "SOURCE_TAG", "edited")
    assert tiers._warm_key(("graph",), {}, []) != before


def test_a_graphs_note_key_survives_a_round_trip_and_tells_dtypes_apart():
    """The compile worker gets a pickled copy of a graph and notes its builds under the
    copy's key: a graph and its round-tripped copy have one key (Values and Nodes pickle
    in a compact form of their own); a change of a value's dtype or shape changes it."""
    def graph(dtype, n=3):
        return trace(lambda x: (x * 2.0).exp().sum(), np.ones(n, dtype))[0]

    g = graph(np.float32)
    copy = pickle.loads(pickle.dumps(g))
    assert [repr(n) for n in copy.nodes] == [repr(n) for n in g.nodes]
    assert [(v.id, v.shape, v.dtype, v.device) for v in copy.inputs] == \
        [(v.id, v.shape, v.dtype, v.device) for v in g.inputs]
    assert note_key(copy) == note_key(g) is not None
    assert note_key(graph(np.float64)) != note_key(g)
    assert note_key(graph(np.float32, 4)) != note_key(g)
