"""A VAE on the 8x8 digits (as in pytorch/examples' vae/main.py, smaller): MLP encoder to
a mean and log-variance, reparameterisation with noise drawn per batch, MLP decoder,
binary cross-entropy plus KL, Adam."""

from __future__ import annotations

import numpy as np

from .common import digits, init_params

BATCH, HIDDEN, LATENT, NBATCH = 64, 128, 8, 4


def build(torch, seed=0, wrap=None):
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, HIDDEN)
            self.fc21 = nn.Linear(HIDDEN, LATENT)
            self.fc22 = nn.Linear(HIDDEN, LATENT)
            self.fc3 = nn.Linear(LATENT, HIDDEN)
            self.fc4 = nn.Linear(HIDDEN, 64)

        def forward(self, x, eps):
            h = F.relu(self.fc1(x))
            mu, logvar = self.fc21(h), self.fc22(h)
            z = mu + eps * torch.exp(0.5 * logvar)
            return self.fc4(F.relu(self.fc3(z))), mu, logvar

    model = VAE()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(x, eps):
        opt.zero_grad()
        logits, mu, logvar = fwd(x, eps)
        bce = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (bce + kld) / x.shape[0]
        loss.backward()
        opt.step()
        return loss.detach()

    x, _ = digits(BATCH * NBATCH, seed)
    rng = np.random.default_rng(seed + 1)
    batches = [(torch.tensor(x[i * BATCH:(i + 1) * BATCH]),
                torch.tensor(rng.standard_normal((BATCH, LATENT)).astype(np.float32)))
               for i in range(NBATCH)]
    return step, batches
