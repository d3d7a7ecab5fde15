"""dyngraph benchmarks: the workloads of /work/shared/BENCHMARKS.md for NumPy, our eager
engine, our compiler, and PyTorch / JAX when they are importable.

    python -m benchmarks [--quick] [--json PATH] [--png PATH] [--only KEY ...]

prints a table of median times (peers timed side by side, interleaved, in one process)
and the goal ratios with PASS/FAIL, writes JSON (default
``benchmarks/results/latest.json``) and a PNG bar chart when matplotlib is importable.
A peer that fails prints its error in its row; the run goes on.

Modules: :mod:`.workloads` (what is timed), :mod:`.timing` (how), :mod:`.report`
(table, goals, JSON, chart), ``__main__`` (the command line).  ``bench_mathlib.py`` and
``bench_fusion.py`` are separate scripts.
"""
