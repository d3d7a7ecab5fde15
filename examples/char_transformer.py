"""A character-level transformer (nanoGPT-style) trained on a small text, then sampled.

PyTorch's code with ``import eager as torch``: token and position embeddings
(``nn.Embedding``), a few pre-norm blocks of causal self-attention
(``F.scaled_dot_product_attention(..., is_causal=True)``) and an MLP with ``GELU``, each
behind a ``LayerNorm`` and a residual connection, a final ``LayerNorm`` and a linear head
to the vocabulary; ``F.cross_entropy`` over every position, ``optim.AdamW`` and
``nn.utils.clip_grad_norm_``. The text is ``examples/data/tiny.txt`` (a few KB of prose
written for this repository); the last tenth is held out for the validation loss. After
training it samples new text one character at a time with ``eager.multinomial`` drawing
from a seeded ``eager.Generator``.

    python examples/char_transformer.py              # eager
    python examples/char_transformer.py --compile    # also trained with the step compiled
    python examples/char_transformer.py --quick      # a few steps (the tests run this)
    python examples/char_transformer.py --steps 2000 --n-embd 64 --n-layer 4

With ``--compile`` the model is trained a second time from the same initial weights on
the same batches with the training step -- ``zero_grad()``, forward, ``backward()``,
``clip_grad_norm_``, ``step()`` -- passed to ``compiler.compile``; both timings are printed
and the losses are compared with the eager run's.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

try:
    import eager as torch
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import eager as torch
import eager.nn.functional as F
from eager import nn, optim

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny.txt")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)   # query, key, value of all heads
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, heads, T, head size)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd: int):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_embd: int = 32, n_head: int = 4,
                 n_layer: int = 2):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():   # GPT-2's scaled residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, generator=None):
        """Append ``max_new_tokens`` characters drawn one by one from the model."""
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


def load_text(path: str = DATA):
    """The text, its sorted characters, and its encoding as an int64 array."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    return text, chars, np.array([stoi[c] for c in text], dtype=np.int64)


def batches(data: np.ndarray, n: int, batch_size: int, block_size: int, seed: int):
    """``n`` random batches of (context, next characters), each ``(batch, block)``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ix = rng.integers(0, len(data) - block_size - 1, batch_size)
        x = np.stack([data[i:i + block_size] for i in ix])
        y = np.stack([data[i + 1:i + 1 + block_size] for i in ix])
        out.append((torch.tensor(x), torch.tensor(y)))
    return out


def train(args, vocab_size, train_batches, val_batches, compiled: bool, log=print):
    """Train a GPT from the initial weights of ``args.seed``; returns (the model, the
    losses printed, seconds, the step function)."""
    torch.manual_seed(args.seed)
    model = GPT(vocab_size, args.block_size, args.n_embd, args.n_head, args.n_layer)
    opt = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)

    def train_step(x, y):
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    step = train_step
    if compiled:
        from compiler import compile
        step = compile(train_step)

    def val_loss():
        model.eval()
        with torch.no_grad():
            v = float(np.mean([model(x, y)[1].item() for x, y in val_batches]))
        model.train()
        return v

    printed = []
    t0 = time.perf_counter()
    running = []
    for i, (x, y) in enumerate(train_batches, 1):
        running.append(step(x, y).item())
        if i % args.print_every == 0 or i == len(train_batches):
            tr, va = float(np.mean(running)), val_loss()
            running = []
            printed += [tr, va]
            log(f"step {i:5d}  train loss {tr:.4f}  val loss {va:.4f}")
    return model, printed, time.perf_counter() - t0, step


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--n-embd", type=int, default=32)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--print-every", type=int, default=100)
    ap.add_argument("--sample", type=int, default=300, help="characters to sample")
    ap.add_argument("--quick", action="store_true",
                    help="40 steps, a short sample (for the tests)")
    ap.add_argument("--compile", action="store_true",
                    help="also train with the training step compiled and compare")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        args.steps, args.print_every, args.sample = 40, 20, 80

    text, chars, data = load_text()
    n_val = len(data) // 10
    train_data, val_data = data[:-n_val], data[-n_val:]
    train_batches = batches(train_data, args.steps, args.batch_size, args.block_size,
                            args.seed)
    val_batches = batches(val_data, 4, args.batch_size, args.block_size, args.seed + 1)
    print(f"text: {len(text)} characters, {len(chars)} distinct; GPT with "
          f"{args.n_layer} blocks, {args.n_head} heads, n_embd {args.n_embd}, context "
          f"{args.block_size}; AdamW, batch {args.batch_size}, {args.steps} steps "
          f"(uniform guess: loss {math.log(len(chars)):.3f})")

    model, losses, secs, _ = train(args, len(chars), train_batches, val_batches, False)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"trained {n_params} parameters in {secs:.2f} s (eager)")
    if args.compile:
        print("-- the same training with the step compiled --")
        _, closses, csecs, step = train(args, len(chars), train_batches, val_batches, True)
        s = step.stats()
        same = np.allclose(closses, losses, rtol=1e-3, atol=1e-5)
        print(f"trained in {csecs:.2f} s (compiled, {secs / csecs:.1f}x eager)")
        print(f"explain: {s['calls']} calls, {s['hits']} compiled hits, {s['traces']} "
              f"traces, {s['fallbacks']} eager fallbacks; "
              f"{'same losses as eager' if same else 'LOSSES DIFFER FROM EAGER'}")
        ex = step.explain(wait=False)
        if ex.fallbacks:
            print("fallback reasons:")
            for r in ex.fallbacks:
                print(f"  {r}")

    g = torch.Generator().manual_seed(args.seed)
    model.eval()
    start = torch.tensor([[chars.index("T")]])
    out = model.generate(start, args.sample, temperature=0.8, generator=g)
    sample = "".join(chars[i] for i in out[0].tolist())
    print(f"sample ({args.sample} characters, temperature 0.8):")
    print(sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())
