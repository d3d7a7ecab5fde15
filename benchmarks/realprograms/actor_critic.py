"""Actor-critic (in the style of pytorch/examples' reinforcement_learning/actor_critic.py,
batched): a cart-pole written in NumPy (16 environments side by side), a shared-trunk
policy and value network called once per environment step, actions sampled in NumPy from
the policy's probabilities (with uniforms fixed per batch, so every library takes the
same actions), then discounted returns, advantage, policy and smooth-L1 value losses,
one Adam step per rollout of 16 environment steps."""

from __future__ import annotations

import numpy as np

from .common import init_params

NENV, HORIZON, HIDDEN, GAMMA, NBATCH = 16, 16, 64, 0.99, 4


class CartPole:
    """Vectorised cart-pole dynamics (gym's CartPole-v1 equations), reset on failure."""

    def __init__(self, state):
        self.s = state.copy()

    def step(self, action):
        x, v, th, w = self.s.T
        force = np.where(action == 1, 10.0, -10.0)
        ct, st = np.cos(th), np.sin(th)
        temp = (force + 0.05 * w * w * st) / 1.1
        thacc = (9.8 * st - ct * temp) / (0.5 * (4.0 / 3.0 - 0.1 * ct * ct / 1.1))
        xacc = temp - 0.05 * thacc * ct / 1.1
        self.s = np.stack([x + 0.02 * v, v + 0.02 * xacc, th + 0.02 * w,
                           w + 0.02 * thacc], axis=1).astype(np.float32)
        done = (np.abs(self.s[:, 0]) > 2.4) | (np.abs(self.s[:, 2]) > 0.21)
        self.s[done] = 0.0
        return self.s.copy(), np.where(done, 0.0, 1.0).astype(np.float32), done


def build(torch, seed=0, wrap=None):
    nn, F = torch.nn, torch.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, HIDDEN)
            self.action_head = nn.Linear(HIDDEN, 2)
            self.value_head = nn.Linear(HIDDEN, 1)

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return F.log_softmax(self.action_head(x), dim=-1), self.value_head(x)

    model = Policy()
    init_params(torch, model, seed)
    fwd = wrap(model) if wrap else model
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def step(start, uniforms):
        env = CartPole(start.numpy())
        state = start
        log_probs, values, rewards, masks = [], [], [], []
        for t in range(HORIZON):
            logp, value = fwd(state)
            p1 = logp[:, 1].detach().exp().numpy()
            action = (uniforms.numpy()[t] < p1).astype(np.int64)
            log_probs.append(logp.gather(1, torch.tensor(action).unsqueeze(1)).squeeze(1))
            values.append(value.squeeze(1))
            s, r, done = env.step(action)
            rewards.append(r)
            masks.append(1.0 - done.astype(np.float32))
            state = torch.tensor(s)
        R = np.zeros(NENV, np.float32)
        returns = []
        for r, m in zip(reversed(rewards), reversed(masks)):
            R = r + GAMMA * R * m
            returns.insert(0, R)
        returns = torch.tensor(np.stack(returns))                  # (HORIZON, NENV)
        returns = (returns - returns.mean()) / (returns.std() + 1e-6)
        values = torch.stack(values)
        advantage = returns - values.detach()
        policy_loss = -(torch.stack(log_probs) * advantage).mean()
        value_loss = F.smooth_l1_loss(values, returns)
        loss = policy_loss + value_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    rng = np.random.default_rng(seed + 1)
    batches = [(torch.tensor(rng.uniform(-0.05, 0.05, (NENV, 4)).astype(np.float32)),
                torch.tensor(rng.uniform(0, 1, (HORIZON, NENV)).astype(np.float32)))
               for _ in range(NBATCH)]
    return step, batches
