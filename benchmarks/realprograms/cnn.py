"""The digits CNN (``examples/train_cnn.py``, as in pytorch/examples' mnist): two
Conv2d/ReLU/MaxPool2d stages, Flatten, Linear, cross-entropy, Adam, on the 8x8 digits."""

from __future__ import annotations

from .common import digits, init_params

C, BATCH, NBATCH = 16, 32, 4


def build(torch, seed=0, wrap=None):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, C, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(C, 2 * C, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2 * C * 2 * 2, 10))
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(fwd(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    x, y = digits(BATCH * NBATCH, seed)
    batches = [(torch.tensor(x[i * BATCH:(i + 1) * BATCH].reshape(BATCH, 1, 8, 8)),
                torch.tensor(y[i * BATCH:(i + 1) * BATCH])) for i in range(NBATCH)]
    return step, batches
