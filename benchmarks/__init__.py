"""dyngraph's benchmarks: our eager engine and our compiler timed side by side with NumPy,
PyTorch and JAX (when importable) in one process; see ``benchmarks/README.md``.

    python -m benchmarks [--quick] [--only NAME ...] [--report]

prints a table of median times and the goals with PASS/FAIL, writes JSON, and with
``--report`` writes ``docs/benchmarks.md``, its charts under ``docs/img/`` and the
README's "How fast" block.

Modules: :mod:`.families` (the workload families, one module each, listed once),
:mod:`.harness` (workloads, goals, checking and running one workload), :mod:`.peers`
(the peers and their availability), :mod:`.timing` (how times are taken),
:mod:`.report` (table, goals, JSON), :mod:`.charts` and :mod:`.markdown` (the report),
``__main__`` (the command line).  ``bench_mathlib.py`` and ``bench_fusion.py`` are
separate scripts.
"""
