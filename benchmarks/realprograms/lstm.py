"""The packed LSTM classifier (``examples/lstm_sequences.py``): noisy sine waves of 6 to
24 samples classified by frequency; padded with ``pad_sequence``, packed with
``pack_padded_sequence`` (lengths a list), ``nn.LSTM``, a linear head on ``h_n``,
cross-entropy, Adam.  Each batch has its own lengths (a compiled step traces each)."""

from __future__ import annotations

import numpy as np

from .common import init_params

FREQS, HIDDEN, BATCH, NBATCH = (0.15, 0.3, 0.6), 32, 32, 4


def build(torch, seed=0, wrap=None):
    nn = torch.nn
    from importlib import import_module
    rnn = import_module(torch.__name__ + ".nn.utils.rnn")

    class SequenceClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(1, HIDDEN, batch_first=True)
            self.head = nn.Linear(HIDDEN, len(FREQS))

        def forward(self, x, lengths):
            packed = rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                              enforce_sorted=False)
            _, (h_n, _) = self.lstm(packed)
            return self.head(h_n[-1])

    model = SequenceClassifier()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, lengths, y):
        opt.zero_grad()
        loss = loss_fn(fwd(x, lengths), y)
        loss.backward()
        opt.step()
        return loss.detach()

    rng = np.random.default_rng(seed + 1)
    batches = []
    for _ in range(NBATCH):
        seqs, labels = [], []
        for _ in range(BATCH):
            c = int(rng.integers(0, len(FREQS)))
            t = np.arange(int(rng.integers(6, 25)))
            w = rng.uniform(0.5, 1.5) * np.sin(FREQS[c] * t + rng.uniform(0, 2 * np.pi))
            seqs.append((w + rng.normal(0, 0.1, len(t))).astype(np.float32)[:, None])
            labels.append(c)
        x = rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True)
        batches.append((x, [len(s) for s in seqs], torch.tensor(np.array(labels))))
    return step, batches
