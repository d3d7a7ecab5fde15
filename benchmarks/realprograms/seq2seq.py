"""Seq2seq with attention (in the style of the PyTorch tutorial "NLP from scratch:
translation with a sequence to sequence network and attention"): an ``nn.GRU`` encoder,
a ``GRUCell`` decoder looped over the target with teacher forcing and dot-product
attention over the encoder outputs; the task reverses random token sequences; NLL loss
of log-softmax, Adam."""

from __future__ import annotations

import numpy as np

from .common import init_params

VOCAB, EMB, HIDDEN, LENGTH, BATCH, NBATCH, SOS = 16, 16, 32, 6, 16, 4, 0


def build(torch, seed=0, wrap=None):
    nn, F = torch.nn, torch.nn.functional

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(VOCAB, EMB)
            self.encoder = nn.GRU(EMB, HIDDEN, batch_first=True)
            self.tgt_emb = nn.Embedding(VOCAB, EMB)
            self.cell = nn.GRUCell(EMB + HIDDEN, HIDDEN)
            self.attn_combine = nn.Linear(2 * HIDDEN, HIDDEN)
            self.out = nn.Linear(HIDDEN, VOCAB)

        def forward(self, src, tgt_in, tgt_out):
            enc, h = self.encoder(self.src_emb(src))        # (B, S, H), (1, B, H)
            h = h[0]
            ctx = torch.zeros_like(h)
            loss = 0.0
            for t in range(tgt_in.shape[1]):
                h = self.cell(torch.cat([self.tgt_emb(tgt_in[:, t]), ctx], dim=1), h)
                scores = torch.bmm(enc, h.unsqueeze(2)).squeeze(2)      # (B, S)
                weights = F.softmax(scores, dim=1)
                ctx = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)    # (B, H)
                o = torch.tanh(self.attn_combine(torch.cat([h, ctx], dim=1)))
                loss = loss + F.nll_loss(F.log_softmax(self.out(o), dim=1), tgt_out[:, t])
            return loss / tgt_in.shape[1]

    model = Seq2Seq()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(src, tgt_in, tgt_out):
        opt.zero_grad()
        loss = fwd(src, tgt_in, tgt_out)
        loss.backward()
        opt.step()
        return loss.detach()

    rng = np.random.default_rng(seed + 1)
    batches = []
    for _ in range(NBATCH):
        src = rng.integers(1, VOCAB, (BATCH, LENGTH))
        tgt = src[:, ::-1]
        tgt_in = np.concatenate([np.full((BATCH, 1), SOS), tgt[:, :-1]], axis=1)
        batches.append((torch.tensor(src), torch.tensor(np.ascontiguousarray(tgt_in)),
                        torch.tensor(np.ascontiguousarray(tgt))))
    return step, batches
