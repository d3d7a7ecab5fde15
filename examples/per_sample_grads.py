"""Per-sample gradients with eager.func: vmap(grad(loss)) against a loop of grad.

    python examples/per_sample_grads.py [--batch 64] [--repeat 20]

The model's parameters are passed to the loss through functional_call, grad
differentiates with respect to them, and vmap maps over the samples (in_dims=(None, 0, 0):
the parameters are shared, data and targets are batched).  vmap runs the loss once for
the whole batch through each op's batching rule, so it is one batched forward and
backward instead of one per sample.
"""

import argparse
import time

import numpy as np

import eager as torch
from eager.func import functional_call, grad, vmap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()

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


if __name__ == "__main__":
    main()
