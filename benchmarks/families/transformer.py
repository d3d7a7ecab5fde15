"""A tiny nanoGPT (``examples/char_transformer.py``): one AdamW train step.

:func:`gpt` builds the model class for a library (ours or PyTorch), so that every peer
runs the same code; ``transformer_ready`` reuses it in new processes.
"""

from __future__ import annotations

import numpy as np

from .. import peers as P
from ..harness import Family, Goal, Workload, with_stats

VOCAB, N_EMBD, N_HEAD, N_LAYER = 40, 16, 2, 1
BATCH, BLOCK = 4, 8
LR = 3e-3


def gpt(lib, nn, F):
    """The model of ``examples/char_transformer.py`` written against ``lib``."""

    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.n_head = n_head
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention(n_embd, n_head)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(),
                                     nn.Linear(4 * n_embd, n_embd))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, N_EMBD)
            self.wpe = nn.Embedding(BLOCK, N_EMBD)
            self.blocks = nn.ModuleList([Block(N_EMBD, N_HEAD) for _ in range(N_LAYER)])
            self.ln_f = nn.LayerNorm(N_EMBD)
            self.lm_head = nn.Linear(N_EMBD, VOCAB)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.wte(idx) + self.wpe(lib.arange(T))
            for block in self.blocks:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    return GPT


def init() -> dict:
    """Initial weights (NumPy) for every peer: ours, built with seed 0."""
    import eager
    import eager.nn.functional as F
    from eager import nn
    eager.manual_seed(0)
    return {k: v.numpy().copy() for k, v in gpt(eager, nn, F)().state_dict().items()}


def data():
    rng = np.random.default_rng(8)
    idx = rng.integers(0, VOCAB, (BATCH, BLOCK + 1))
    return idx[:, :-1].copy(), idx[:, 1:].copy()


def setup(lib, nn, F, optim, weights):
    """``(step, x, y)``: the training step of the example (clipping included)."""
    model = gpt(lib, nn, F)()
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()
    x, y = data()
    return step, lib.tensor(x), lib.tensor(y)


def transformer_workload(quick: bool) -> Workload:
    weights = {}

    def w():
        if not weights:
            weights.update(init())
        return weights

    def eager_():
        import eager
        import eager.nn.functional as F
        from eager import nn, optim
        step, x, y = setup(eager, nn, F, optim, w())
        return lambda: step(x, y)

    def compiled_():
        import eager
        import eager.nn.functional as F
        from compiler import compile
        from eager import nn, optim
        step, x, y = setup(eager, nn, F, optim, w())
        cstep = compile(step, backend="numba")
        return with_stats(lambda: cstep(x, y), cstep)

    def torch_():
        torch = P.torch()
        step, x, y = setup(torch, torch.nn, torch.nn.functional, torch.optim, w())
        return lambda: step(x, y)

    def torch_compile_():
        torch, tc = P.torch_compile(quick)
        step, x, y = setup(torch, torch.nn, torch.nn.functional, torch.optim, w())
        cstep = tc(step)
        return lambda: cstep(x, y)

    return Workload(
        "transformer", f"nanoGPT, {N_LAYER} block, n_embd {N_EMBD}, {N_HEAD} heads, batch "
                       f"{BATCH}x{BLOCK}, AdamW step",
        [(P.EAGER, eager_), (P.COMPILED, compiled_), (P.TORCH, torch_),
         (P.TORCH_COMPILE, torch_compile_)],
        rtol=1e-4, atol=1e-6, reference=P.EAGER, check_calls=4, stateful=True,
        notes={P.EAGER: "embeddings, a pre-norm block (causal scaled_dot_product_attention, "
                        "GELU MLP), LayerNorm, head, cross_entropy; backward, "
                        "clip_grad_norm_, AdamW",
               P.COMPILED: "the whole step compiled (zero_grad, forward, backward, "
                           "clip_grad_norm_, AdamW)",
               P.TORCH_COMPILE: "torch.compile(step): the whole step"})


FAMILY = Family(
    "transformer", "transformer train step",
    "The model of `examples/char_transformer.py` at a tiny size: token and position "
    f"embeddings, {N_LAYER} pre-norm block (causal `F.scaled_dot_product_attention` with "
    f"{N_HEAD} heads, a GELU MLP, `LayerNorm`s), a final `LayerNorm`, a linear head to "
    f"{VOCAB} characters and `F.cross_entropy`; n_embd {N_EMBD}, a batch of {BATCH} "
    f"contexts of {BLOCK} characters. One call is one step: zero_grad, forward, backward, "
    "`clip_grad_norm_(1.0)`, AdamW. Every peer starts from the same weights; the losses of "
    "its first four steps are checked against ours eager.",
    lambda quick: [transformer_workload(quick)],
    goals=[
        Goal("transformer step: ours compiled / torch.compile", "<=", 1.0,
             ("transformer", P.COMPILED), ("transformer", P.TORCH_COMPILE)),
        Goal("transformer step: our eager / PyTorch eager", "<=", 1.0,
             ("transformer", P.EAGER), ("transformer", P.TORCH)),
    ])
