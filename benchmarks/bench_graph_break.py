"""A training step with graph breaks, eager and compiled, side by side in one process.

The step (an MLP 32-64-64-10 with GELU, cross-entropy, Adam, batch 64) reads its logits
into NumPy (``logits.numpy().argmax()``) and logs ``float(loss)`` to a list: two graph
breaks. Three ways to run it:

- eager;
- compiled, split at its breaks (``compiler/split.py``): the forward, the loss and the
  Adam step are compiled pieces, the two reads and the backward run eagerly;
- compiled without its source (the same code made by ``exec`` without a ``linecache``
  entry, so it cannot be split): its body runs eagerly with the model a compiled region,
  which is what every graph break did before the split.

Prints per-step times (best of the rounds) and the ratios to eager.

Run:  python benchmarks/bench_graph_break.py [--steps N] [--rounds R]
"""

from __future__ import annotations

import argparse
import linecache
import time
import warnings

import numpy as np

import compiler
import eager as torch
from eager import nn

STEP = '''
def step(x, y):
    logits = model(x)
    tops.append(int(logits.detach().numpy().argmax()))   # tensor data into NumPy
    loss = F.cross_entropy(logits, y)
    losses.append(float(loss))                          # a changing float into Python
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()
'''


def make(with_source: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                          nn.Linear(64, 10))
    ns = {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=1e-3),
          "F": nn.functional, "tops": [], "losses": []}
    name = f"<graph-break step {'with' if with_source else 'without'} source>"
    if with_source:
        linecache.cache[name] = (len(STEP), None, STEP.splitlines(True), name)
    exec(compile(STEP, name, "exec"), ns)
    return ns["step"]


def per_step(fn, batches, steps: int) -> float:
    t0 = time.perf_counter()
    for i in range(steps):
        fn(*batches[i % len(batches)])
    return (time.perf_counter() - t0) / steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    batches = [(torch.tensor(rng.standard_normal((64, 32)).astype(np.float32)),
                torch.tensor(rng.integers(0, 10, 64))) for _ in range(8)]
    runs = {"eager": make(True), "split": compiler.compile(make(True)),
            "not split": compiler.compile(make(False))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", compiler.CompileWarning)
        for fn in runs.values():
            per_step(fn, batches, 40)
        compiler.wait()
        best = {k: min(per_step(fn, batches, args.steps) for _ in range(args.rounds))
                for k, fn in runs.items()}
    for k, s in best.items():
        print(f"{k:>10}: {s * 1e3:.3f} ms/step  ({best['eager'] / s:.2f}x eager)")
    pieces = runs["split"].explain().pieces
    print("pieces: " + ", ".join(f"{lines} {'compiled' if ex else 'eager'}"
                                 for lines, ex in pieces))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
