"""Per-sample gradients with eager.func: vmap(grad(loss)) against a loop of grad.

    python examples/per_sample_grads.py [--batch 64] [--repeat 20] [--quick] [--compile]

The model's parameters are passed to the loss through functional_call, grad
differentiates with respect to them, and vmap maps over the samples (in_dims=(None, 0, 0):
the parameters are shared, data and targets are batched).  vmap runs the loss once for
the whole batch through each op's batching rule, so it is one batched forward and
backward instead of one per sample.

``--compile``: ``compiler.compile`` does not trace through ``vmap``/``grad`` (they run
eagerly under it, and ``explain()`` says so), so the compiled run computes the same
per-sample gradients written batched by hand -- the parameters repeated per sample,
``bmm``, ``autograd.grad`` of the summed loss -- with that whole function compiled. Both
timings are printed and the compiled results are compared with the same function run
eagerly as the compiler promises (README, "Exactness"): bit for bit, else (its kernels
compute ``tanh``/``exp`` within 3 ulp) every call checked with ``check=True`` within the
stated bound.
"""

import argparse
import os
import sys
import time

import numpy as np

try:
    import eager as torch
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
from eager.func import functional_call, grad, vmap


def by_hand(params, x, y):
    """The per-sample gradients of the example's model without function transforms: each
    sample gets its own copy of the parameters (a batch dimension), so the gradient of
    the summed loss with respect to the copies is the per-sample gradient."""
    n = x.shape[0]
    p = {k: v.unsqueeze(0).repeat(n, *[1] * v.dim()).requires_grad_()
         for k, v in params.items()}
    h = torch.tanh(torch.bmm(p["0.weight"], x.unsqueeze(2)).squeeze(2) + p["0.bias"])
    out = torch.bmm(p["2.weight"], h.unsqueeze(2)).squeeze(2) + p["2.bias"]
    loss = torch.nn.functional.cross_entropy(out, y, reduction="sum")
    return dict(zip(p, torch.autograd.grad(loss, list(p.values()))))


def compiled(per_sample, grads, params, x, y, repeat) -> int:
    from compiler import compile, wait
    from compiler.check import CheckError, inexact_ops
    print("-- compiled --")
    cv = compile(per_sample)
    cv(params, x, y)
    why = cv.explain(wait=False).fallbacks
    print(f"compile(vmap(grad(loss))): {why[0] if why else 'traced'}")
    cf = compile(by_hand)
    for _ in range(3):
        cf(params, x, y)
        wait()                             # fused kernels built: time what replays run
    t0 = time.perf_counter()
    for _ in range(repeat):
        want = by_hand(params, x, y)
    t_eager = (time.perf_counter() - t0) / repeat
    t0 = time.perf_counter()
    for _ in range(repeat):
        got = cf(params, x, y)
    t_comp = (time.perf_counter() - t0) / repeat
    print(f"by hand: eager {t_eager * 1e3:.2f} ms, compiled {t_comp * 1e3:.2f} ms "
          f"({t_eager / t_comp:.1f}x eager's speed)")
    worst = max(float(np.abs(got[k].numpy() - grads[k].numpy()).max()) for k in grads)
    print(f"compiled by hand: max difference from vmap(grad): {worst:.2e}")
    s = cf.stats()
    head = (f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} traces, "
            f"{s['fallbacks']} eager fallbacks; ")
    if all(np.array_equal(got[k].numpy(), want[k].numpy()) for k in want):
        print(head + "same gradients as eager, bit for bit")
        return 0
    inexact = inexact_ops(cf.explain(wait=False).kernels)
    if not inexact:
        print(head + "GRADIENTS DIFFER FROM EAGER (bit for bit was promised: no kernel "
              "computed anything but eager's operations)")
        return 1
    checked = compile(by_hand, check=True)
    try:
        for k in range(5):
            checked(params, x, y)
            if k == 1:
                wait()
    except CheckError as e:
        print(head + f"COMPILED CALL OUTSIDE THE STATED BOUND: {e}")
        return 1
    print(head + f"within the stated bound of eager at each of {checked.stats()['hits']} "
          f"checked calls (its kernels compute {', '.join(inexact)}, not eager's bits)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="batch 16, 3 repeats")
    ap.add_argument("--compile", action="store_true",
                    help="also compute them compiled (written batched by hand) and compare")
    args = ap.parse_args(argv)
    if args.quick:
        args.batch, args.repeat = 16, 3

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
    x = torch.randn(args.batch, 8)
    y = torch.randint(0, 4, (args.batch,))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):   # one sample: add the batch dimension the model expects
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    looped = grad(loss)

    grads = per_sample(params, x, y)
    ref = [looped(params, x[i], y[i]) for i in range(args.batch)]
    worst = max(float(np.abs(grads[k].numpy()[i] - ref[i][k].numpy()).max())
                for k in params for i in range(args.batch))
    print("per-sample gradient shapes:",
          {k: tuple(v.shape) for k, v in grads.items()})
    print(f"max difference from a loop of grad: {worst:.2e}")

    t0 = time.perf_counter()
    for _ in range(args.repeat):
        per_sample(params, x, y)
    t_vmap = (time.perf_counter() - t0) / args.repeat
    t0 = time.perf_counter()
    for _ in range(max(1, args.repeat // 10)):
        [looped(params, x[i], y[i]) for i in range(args.batch)]
    t_loop = (time.perf_counter() - t0) / max(1, args.repeat // 10)
    print(f"vmap(grad): {t_vmap * 1e3:.2f} ms, loop of grad: {t_loop * 1e3:.2f} ms "
          f"({t_loop / t_vmap:.0f}x)")
    if args.compile:
        return compiled(per_sample, grads, params, x, y, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
