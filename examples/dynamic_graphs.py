"""Dynamic graphs: the graph is whatever your Python did, so loops, recursion and
variable-length inputs need nothing special.

1. a loop whose trip count depends on the data (a fixed-point iteration run until it
   converges), differentiated through every iteration it happened to take — eagerly and
   under ``compile`` (each trip count is one path of the trace tree);
2. recursion over a tree: a tiny recursive network over random binary trees, trained;
3. variable-length sequences through ``nn.RNNCell`` and ``nn.GRUCell``, trained.

    python examples/dynamic_graphs.py [--quick] [--compile]

``--compile`` also trains section 3 with the whole training step compiled (one trace per
sequence length, chained by the trace tree) and prints both timings.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:
    import eager as torch
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from eager import nn, optim
from eager.viz import graph_nodes

# -- 1. a loop with a data-dependent trip count -------------------------------------------

def fixed_point(w, x, tol=1e-4, max_iter=100):
    """Iterate h <- tanh(w @ h + x) until it stops moving; the loop length is data."""
    h = torch.zeros_like(x)
    for it in range(1, max_iter + 1):
        h_new = torch.tanh(w @ h + x)
        done = (h_new - h).abs().max() < tol      # a Python bool read from a tensor
        h = h_new
        if done:
            break
    return h, it


def section_loop(quick: bool) -> None:
    print("== 1. loop with a data-dependent trip count ==")
    torch.manual_seed(0)
    n = 8
    w = (torch.randn(n, n) * 0.3).requires_grad_()
    for scale in (0.1, 1.0, 3.0):
        x = torch.randn(n) * scale
        h, iters = fixed_point(w, x)
        loss = (h * h).sum()
        loss.backward()
        size = sum(1 for it in graph_nodes(loss) if it.kind == "op")
        print(f"input scale {scale:3.1f}: converged after {iters:2d} iterations, graph of "
              f"{size:3d} ops, |dloss/dw| = {w.grad.norm().item():.4f}")
        w.grad = None

    # the same function compiled: the `if done` outcomes are branch guards, so every
    # trip count seen so far is one path of the trace tree, replayed when it recurs
    from compiler import compile
    cf = compile(lambda w, x: fixed_point(w, x)[0])
    inputs = [torch.randn(n) * scale for scale in (0.1, 1.0, 3.0)]
    trips = sorted({fixed_point(w, x)[1] for x in inputs})
    with torch.no_grad():
        for _ in range(2 if quick else 10):
            for x in inputs:
                a, b = cf(w, x), fixed_point(w, x)[0]
                assert np.allclose(a.numpy(), b.numpy(), atol=1e-6), "compiled != eager"
    s = cf.stats()
    print(f"compiled: {s['calls']} calls on inputs that take {trips} iterations: "
          f"{s['traces']} traces (one per trip count), {s['hits']} replayed, "
          "results equal eager")


# -- 2. recursion over a tree -------------------------------------------------------------

def random_tree(rng, depth=0):
    """A random binary tree: a leaf is a token id, a node a (left, right) pair."""
    if depth >= 4 or (depth > 0 and rng.random() < 0.35):
        return int(rng.integers(0, 10))
    return (random_tree(rng, depth + 1), random_tree(rng, depth + 1))


def leaves(tree):
    return [tree] if isinstance(tree, int) else leaves(tree[0]) + leaves(tree[1])


class TreeNet(nn.Module):
    """h(leaf) = embedding[token]; h(node) = tanh(W [h(left); h(right)] + b)."""

    def __init__(self, dim=16):
        super().__init__()
        self.embed = nn.Embedding(10, dim)
        self.combine = nn.Linear(2 * dim, dim)
        self.out = nn.Linear(dim, 2)

    def encode(self, tree):
        if isinstance(tree, int):
            return self.embed(torch.tensor([tree]))[0]
        left, right = self.encode(tree[0]), self.encode(tree[1])   # plain Python recursion
        return torch.tanh(self.combine(torch.cat([left, right])))

    def forward(self, tree):
        return self.out(self.encode(tree))


def section_tree(quick: bool) -> None:
    print("\n== 2. recursion over a tree ==")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    trees = [random_tree(rng) for _ in range(60 if quick else 300)]
    # label: are most tokens small (< 5)?
    labels = [int(np.mean(np.array(leaves(t)) < 5) > 0.5) for t in trees]
    net = TreeNet()
    opt = optim.Adam(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    sizes = [len(leaves(t)) for t in trees]
    print(f"{len(trees)} random trees with {min(sizes)}..{max(sizes)} leaves; "
          f"label = most tokens < 5")
    epochs = 2 if quick else 8
    for epoch in range(1, epochs + 1):
        total, correct = 0.0, 0
        for tree, label in zip(trees, labels):
            logits = net(tree)
            loss = loss_fn(logits[None], torch.tensor([label]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            correct += int(logits.argmax().item() == label)
        print(f"epoch {epoch}: loss {total / len(trees):.4f}  train accuracy "
              f"{correct / len(trees):6.1%}")


# -- 3. variable-length sequences through RNNCell / GRUCell -------------------------------

class SeqRegressor(nn.Module):
    def __init__(self, cell, hidden=24):
        super().__init__()
        self.cell = cell(1, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, seq):
        h = None
        for t in range(seq.shape[0]):            # as many steps as this sequence has
            h = self.cell(seq[t:t + 1][None], h)
        return self.head(h)[0, 0]


def train_sequences(cell, seqs, targets, epochs, compiled):
    """Train a ``SeqRegressor`` with Adam; returns (first MSE, last MSE, seconds, step)."""
    torch.manual_seed(0)
    model = SeqRegressor(cell)
    opt = optim.Adam(model.parameters(), lr=0.003)

    def step(s, y):
        pred = model(s)
        loss = (pred - y) ** 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    if compiled:
        from compiler import compile
        # one trace per sequence length (3..12 here): allow them all; beyond the limit the
        # step would run eagerly with each module call compiled as its own region
        step = compile(step, max_traces=16)
    t0 = time.perf_counter()
    mses = []
    for _ in range(epochs):
        total = sum(step(torch.tensor(s), y) for s, y in zip(seqs, targets))
        mses.append(total / len(seqs))
    return mses[0], mses[-1], time.perf_counter() - t0, step


def section_sequences(quick: bool, compiled: bool) -> None:
    print("\n== 3. variable-length sequences through RNNCell / GRUCell ==")
    rng = np.random.default_rng(1)
    n_seq = 80 if quick else 300
    seqs = [rng.uniform(-1, 1, int(rng.integers(3, 13))).astype(np.float32)
            for _ in range(n_seq)]
    targets = [float(s.sum()) / 4 for s in seqs]  # regress the (scaled) sum
    baseline = float(np.mean(np.square(targets)))
    print(f"{n_seq} sequences of length {min(map(len, seqs))}..{max(map(len, seqs))}; "
          f"target = sum / 4 (predicting 0 gives MSE {baseline:.4f})")
    epochs = 2 if quick else 6
    for cell in (nn.RNNCell, nn.GRUCell):
        first, last, secs, _ = train_sequences(cell, seqs, targets, epochs, False)
        print(f"{cell.__name__:8s}: MSE {first:.4f} (epoch 1) -> {last:.4f} (epoch {epochs}), "
              f"{secs:.2f} s eager")
        if compiled:
            cfirst, clast, csecs, step = train_sequences(cell, seqs, targets, epochs, True)
            s = step.stats()
            same = np.isclose(cfirst, first, rtol=1e-4) and np.isclose(clast, last, rtol=1e-3)
            print(f"{'':8s}  MSE {cfirst:.4f} -> {clast:.4f}, {csecs:.2f} s compiled "
                  f"({secs / csecs:.1f}x): {s['traces']} traces, {s['hits']} of {s['calls']} "
                  f"steps replayed, {s['fallbacks']} eager; "
                  f"{'same losses as eager' if same else 'LOSSES DIFFER FROM EAGER'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller data, fewer epochs")
    ap.add_argument("--compile", action="store_true",
                    help="also train section 3 with the training step compiled")
    args = ap.parse_args(argv)
    section_loop(args.quick)
    section_tree(args.quick)
    section_sequences(args.quick, args.compile)
    print("\ndone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
