"""Debugging in eager mode: every intermediate is a real tensor you can print, the graph
can be drawn, and anomaly detection names the op (and the forward line) behind a NaN.

1. print intermediates inside a forward pass (and with a forward hook);
2. look at gradients of intermediates (``retain_grad``, ``register_hook``);
3. print the graph behind a loss (``eager.viz.print_graph``; ``--dot PATH`` writes
   Graphviz DOT text, render with ``dot -Tsvg PATH -o graph.svg``);
4. find where a NaN gradient comes from with ``autograd.detect_anomaly()``.

    python examples/debugging.py [--quick] [--dot graph.dot]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

try:
    import eager as torch
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from eager import nn, viz


def section_intermediates(model, x, y):
    print("== 1. printing intermediates ==")
    h = x
    for i, layer in enumerate(model):
        h = layer(h)
        print(f"after layer {i} ({type(layer).__name__:6s}): shape {tuple(h.shape)}, "
              f"mean {h.mean().item():+.4f}, std {h.std().item():.4f}, "
              f"grad_fn {h.grad_fn.name()}")
    print("logits of the first two samples:")
    print(h[:2])

    # the same with a forward hook, without touching the forward code
    def report(module, inputs, output):
        dead = (output == 0).float().mean().item()
        print(f"hook on {type(module).__name__}: {dead:.0%} of the activations are zero")
    handle = model[1].register_forward_hook(report)
    model(x)
    handle.remove()


def section_gradients(model, x, y, loss_fn):
    print("\n== 2. gradients of intermediates ==")
    hidden = model[1](model[0](x))
    hidden.retain_grad()                     # keep .grad of a non-leaf
    norms = []
    hidden.register_hook(lambda g: norms.append(g.norm().item()))
    loss = loss_fn(model[2](hidden), y)
    loss.backward()
    print(f"loss {loss.item():.4f}")
    print(f"d loss / d hidden: shape {tuple(hidden.grad.shape)}, norm {norms[0]:.4f} "
          "(seen by a hook during backward)")
    for name, p in model.named_parameters():
        print(f"  {name:10s} grad norm {p.grad.norm().item():.4f}")
    model.zero_grad()


def section_graph(model, x, y, loss_fn, dot_path):
    print("\n== 3. the graph behind the loss ==")
    loss = loss_fn(model(x), y)
    viz.print_graph(loss, params=dict(model.named_parameters()))
    dot = viz.to_dot(loss, params=dict(model.named_parameters()))
    if dot_path:
        with open(dot_path, "w") as f:
            f.write(dot)
        print(f"wrote {dot_path} ({len(dot.splitlines())} lines of DOT); render with "
              f"`dot -Tsvg {dot_path} -o graph.svg`")
    else:
        print(f"(viz.to_dot gives {len(dot.splitlines())} lines of Graphviz DOT; "
              "pass --dot PATH to write them)")


def pairwise_distance_loss(a, b):
    """Mean Euclidean distance between rows; sqrt at 0 has an infinite derivative."""
    d = ((a - b) ** 2).sum(dim=1).sqrt()
    return d.mean()


def section_anomaly():
    print("\n== 4. where does the NaN come from? ==")
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]], requires_grad=True)
    b = torch.tensor([[1.0, 1.0], [3.0, 4.0], [0.0, 1.0]])   # row 1 equals a's row 1
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = pairwise_distance_loss(a, b)
        loss.backward()
    print(f"loss {loss.item():.4f} is finite, but a.grad has "
          f"{int(np.isnan(a.grad.numpy()).sum())} NaN entries:")
    print(a.grad)

    a.grad = None
    try:
        with torch.autograd.detect_anomaly(), np.errstate(divide="ignore", invalid="ignore"):
            loss = pairwise_distance_loss(a, b)
            loss.backward()
    except RuntimeError as e:
        lines = str(e).splitlines()
        print("with detect_anomaly(), backward raises:")
        print("  " + lines[0])
        here = os.path.basename(__file__)
        for k, ln in enumerate(lines[1:], 1):  # the forward traceback: frames in this file
            if here in ln:
                print("  " + ln.strip())
                if k + 1 < len(lines) and not lines[k + 1].lstrip().startswith("File"):
                    print("      " + lines[k + 1].strip())
        print("fix: sqrt(sum + eps), or clamp the sum away from zero")
    else:
        print("detect_anomaly did not raise")
        raise SystemExit(1)

    a.grad = None
    d = ((a - b) ** 2).sum(dim=1).add(1e-12).sqrt()
    d.mean().backward()
    print(f"with eps: a.grad finite everywhere: {bool(np.isfinite(a.grad.numpy()).all())}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="(already quick; for symmetry)")
    ap.add_argument("--dot", metavar="PATH", help="write the loss graph as Graphviz DOT")
    args = ap.parse_args(argv)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = torch.randn(16, 4)
    y = torch.randint(0, 3, (16,))
    loss_fn = nn.CrossEntropyLoss()
    section_intermediates(model, x, y)
    section_gradients(model, x, y, loss_fn)
    section_graph(model, x, y, loss_fn, args.dot)
    section_anomaly()
    print("\ndone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
