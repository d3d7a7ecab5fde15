"""A tiny ViT on the 8x8 digits (in the style of lucidrains' vit-pytorch): 2x2 patches by
reshape/permute, a linear patch embedding, a class token and learned positions,
``nn.TransformerEncoderLayer`` (batch_first, pre-norm, GELU) twice, the class token's
LayerNorm and a linear head; cross-entropy, Adam."""

from __future__ import annotations

from .common import digits, init_params

PATCH, DIM, HEADS, DEPTH, BATCH, NBATCH = 2, 32, 4, 2, 32, 4
NPATCH = (8 // PATCH) ** 2


def build(torch, seed=0, wrap=None):
    nn, F = torch.nn, torch.nn.functional

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.to_patch = nn.Linear(PATCH * PATCH, DIM)
            self.cls = nn.Parameter(torch.zeros(1, 1, DIM))
            self.pos = nn.Parameter(torch.zeros(1, NPATCH + 1, DIM))
            self.layers = nn.ModuleList([
                nn.TransformerEncoderLayer(DIM, HEADS, dim_feedforward=2 * DIM, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
                for _ in range(DEPTH)])
            self.norm = nn.LayerNorm(DIM)
            self.head = nn.Linear(DIM, 10)

        def forward(self, img):
            b = img.shape[0]
            p = img.view(b, 8 // PATCH, PATCH, 8 // PATCH, PATCH).permute(0, 1, 3, 2, 4)
            x = self.to_patch(p.reshape(b, NPATCH, PATCH * PATCH))
            x = torch.cat([self.cls.expand(b, -1, -1), x], dim=1) + self.pos
            for layer in self.layers:
                x = layer(x)
            return self.head(self.norm(x[:, 0]))

    model = ViT()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(img, y):
        opt.zero_grad()
        loss = F.cross_entropy(fwd(img), y)
        loss.backward()
        opt.step()
        return loss.detach()

    x, y = digits(BATCH * NBATCH, seed)
    batches = [(torch.tensor(x[i * BATCH:(i + 1) * BATCH].reshape(BATCH, 8, 8)),
                torch.tensor(y[i * BATCH:(i + 1) * BATCH])) for i in range(NBATCH)]
    return step, batches
