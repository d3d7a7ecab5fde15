"""Debugging in eager mode: every intermediate is a real tensor you can print, the graph
can be drawn, and anomaly detection names the op (and the forward line) behind a NaN.

1. print intermediates inside a forward pass (and with a forward hook);
2. look at gradients of intermediates (``retain_grad``, ``register_hook``);
3. print the graph behind a loss (``eager.viz.print_graph``; ``--dot PATH`` writes
   Graphviz DOT text, render with ``dot -Tsvg PATH -o graph.svg``);
4. find where a NaN gradient comes from with ``autograd.detect_anomaly()``;
5. with ``--compile``: the same loss and gradients from a compiled function, timed against
   eager, compared as the compiler promises (README, "Exactness": bit for bit, else each
   call checked with ``compile(..., check=True)``, the debugging switch for compiled code,
   within the stated bound), and what ``explain()`` tells about it.

    python examples/debugging.py [--quick] [--compile] [--dot graph.dot]
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


def section_compiled(model, x, y, loss_fn, calls):
    print(f"\n== 5. the same loss and gradients compiled ({calls} calls each) ==")
    from compiler import compile, wait
    from compiler.check import CheckError, inexact_ops

    def loss_and_grads(x, y):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss

    def run(fn):
        t0 = time.perf_counter()
        for _ in range(calls):
            loss = fn(x, y)
        secs = time.perf_counter() - t0
        return secs, [loss.detach().numpy().copy()] + [p.grad.numpy().copy()
                                                      for p in model.parameters()]

    cf = compile(loss_and_grads)
    cf(x, y)                                  # records the trace (runs eagerly)
    cf(x, y)
    wait()                                    # fused kernels built: time what replays run
    t_eager, want = run(loss_and_grads)
    t_comp, got = run(cf)
    print(f"eager {t_eager / calls * 1e6:.0f} us per call, compiled "
          f"{t_comp / calls * 1e6:.0f} us per call ({t_eager / t_comp:.1f}x eager's speed)")
    s = cf.stats()
    print(f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} traces, "
          f"{s['fallbacks']} eager fallbacks (print(cf.explain()) for guards and kernels)")
    inexact = inexact_ops(cf.explain(wait=False).kernels)
    if all(np.array_equal(a, b) for a, b in zip(got, want)):
        print("compared: same loss and gradients as eager, bit for bit")
    elif not inexact:
        print("compared: LOSS OR GRADIENTS DIFFER FROM EAGER (bit for bit was promised: no "
              "kernel computed anything but eager's operations)")
        raise SystemExit(1)
    else:
        # check=True replays and runs eager beside every call, comparing within the bound
        checked = compile(loss_and_grads, check=True)
        try:
            for k in range(5):
                checked(x, y)
                if k == 1:
                    wait()
        except CheckError as e:
            print(f"compared: OUTSIDE THE STATED BOUND: {e}")
            raise SystemExit(1) from None
        print(f"compared: not eager's bits (its kernels compute {', '.join(inexact)}), "
              f"within the stated bound at each of {checked.stats()['hits']} calls checked "
              "with compile(..., check=True)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="(already quick; for symmetry)")
    ap.add_argument("--dot", metavar="PATH", help="write the loss graph as Graphviz DOT")
    ap.add_argument("--compile", action="store_true",
                    help="also compute the loss and gradients compiled, timed and compared")
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
    if args.compile:
        section_compiled(model, x, y, loss_fn, 20 if args.quick else 200)
    print("\ndone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
