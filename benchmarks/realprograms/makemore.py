"""makemore part 2 (Karpathy's MLP on characters): raw parameter tensors C, W1, b1, W2,
b2, a context of 3 characters embedded by indexing ``C[X]``, tanh hidden layer,
``F.cross_entropy``, and a hand-written SGD update ``p.data += -lr * p.grad``."""

from __future__ import annotations

import numpy as np

VOCAB, CONTEXT, EMB, HIDDEN, BATCH, NBATCH = 27, 3, 10, 200, 32, 8
NAMES = ("emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily "
         "elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace "
         "chloe penelope layla riley zoey nora lily eleanor hannah lillian addison aubrey "
         "ellie stella natalie zoe leah hazel violet aurora savannah audrey brooklyn bella")


def dataset():
    stoi = {c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
    X, Y = [], []
    for w in NAMES.split():
        ctx = [0] * CONTEXT
        for ch in w + ".":
            ix = stoi.get(ch, 0)
            X.append(ctx)
            Y.append(ix)
            ctx = ctx[1:] + [ix]
    return np.array(X, dtype=np.int64), np.array(Y, dtype=np.int64)


def build(torch, seed=0, wrap=None):
    F = torch.nn.functional
    rng = np.random.default_rng(seed)

    def param(*shape, scale):
        return torch.tensor((rng.standard_normal(shape) * scale).astype(np.float32),
                            requires_grad=True)

    C = param(VOCAB, EMB, scale=1.0)
    W1 = param(CONTEXT * EMB, HIDDEN, scale=(5 / 3) / (CONTEXT * EMB) ** 0.5)
    b1 = param(HIDDEN, scale=0.01)
    W2 = param(HIDDEN, VOCAB, scale=0.01)
    b2 = param(VOCAB, scale=0.0)
    parameters = [C, W1, b1, W2, b2]

    def forward(Xb, Yb):
        emb = C[Xb]
        h = torch.tanh(emb.view(emb.shape[0], -1) @ W1 + b1)
        logits = h @ W2 + b2
        return F.cross_entropy(logits, Yb)

    fwd = wrap(forward) if wrap else forward

    def step(Xb, Yb):
        loss = fwd(Xb, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
        return loss.detach()

    X, Y = dataset()
    r = np.random.default_rng(seed + 1)
    batches = []
    for _ in range(NBATCH):
        ix = r.integers(0, len(X), BATCH)
        batches.append((torch.tensor(X[ix]), torch.tensor(Y[ix])))
    return step, batches
