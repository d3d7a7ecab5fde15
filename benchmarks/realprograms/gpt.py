"""A minGPT-like tiny GPT: token and position embeddings, two pre-norm blocks of causal
self-attention written out (qkv projection, heads by view/transpose, masked_fill with a
tril mask, softmax) and a GELU MLP, a tied-free LM head; cross-entropy, AdamW,
clip_grad_norm_."""

from __future__ import annotations

import numpy as np

from .common import init_params

VOCAB, BLOCK, EMBD, HEADS, LAYERS, BATCH, NBATCH = 48, 16, 32, 4, 2, 8, 4


def build(torch, seed=0, wrap=None):
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(EMBD, 3 * EMBD)
            self.c_proj = nn.Linear(EMBD, EMBD)
            self.register_buffer("bias", torch.tril(torch.ones(BLOCK, BLOCK))
                                 .view(1, 1, BLOCK, BLOCK))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(EMBD, dim=2)
            k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.shape[-1] ** 0.5))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(EMBD)
            self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(),
                                     nn.Linear(4 * EMBD, EMBD))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, EMBD)
            self.wpe = nn.Embedding(BLOCK, EMBD)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(EMBD)
            self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)

        def forward(self, idx, targets):
            b, t = idx.shape
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = GPT()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    def step(idx, targets):
        opt.zero_grad()
        loss = fwd(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    rng = np.random.default_rng(seed + 1)
    data = rng.integers(0, VOCAB, 4096)
    batches = []
    for _ in range(NBATCH):
        ix = rng.integers(0, len(data) - BLOCK - 1, BATCH)
        x = np.stack([data[i:i + BLOCK] for i in ix])
        y = np.stack([data[i + 1:i + 1 + BLOCK] for i in ix])
        batches.append((torch.tensor(x), torch.tensor(y)))
    return step, batches
