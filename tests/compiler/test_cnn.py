"""Convolution, pooling and normalization layers under ``compiler.compile``: a whole CNN
train step (forward, backward, optimizer step, BatchNorm running statistics) traced and
replayed equals the same step run eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import compiler
import eager
from eager import nn, optim
from eager.nn import functional as F


def _cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), nn.GroupNorm(2, 6), nn.ReLU(),
        nn.ConvTranspose2d(6, 3, 2, stride=2), nn.InstanceNorm2d(3, affine=True),
        nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
        nn.Upsample(scale_factor=2, mode="bilinear"), nn.ReflectionPad2d(1),
        nn.AdaptiveAvgPool2d((3, 3)), nn.Flatten(), nn.Linear(27, 10))


def _step_fn():
    eager.manual_seed(0)
    model = _cnn()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_cnn_train_step_compiled_equals_eager(backend):
    eager_model, eager_step = _step_fn()
    model, step = _step_fn()
    step = compiler.compile(step, backend=backend)
    rng = np.random.default_rng(0)
    for i in range(5):
        x = eager.tensor(rng.standard_normal((6, 1, 12, 12)).astype(np.float32))
        y = eager.tensor(rng.integers(0, 10, 6))
        expected, got = eager_step(x, y), step(x, y)
        if i < 2:
            compiler.wait()
        np.testing.assert_allclose(got.item(), expected.item(), rtol=1e-5)
        for (name, a), b in zip(eager_model.state_dict().items(),
                                model.state_dict().values()):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=2e-5, atol=2e-6,
                                       err_msg=name)
    assert step.stats()["hits"] >= 2


def test_pooling_indices_and_functional_ops_replay():
    """Functions of the input only (no parameters): max pooling with indices, adaptive max
    pooling, non-constant padding, unfold/fold and nearest resampling replay the values
    eager computes on new data."""

    def fn(x):
        v, i = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        a = F.adaptive_max_pool2d(F.pad(x, (1, 2, 0, 1), mode="replicate"), (3, 4))
        f = F.fold(F.unfold(x, 2, padding=1), x.shape[2:], 2, padding=1)
        n = F.interpolate(v, scale_factor=1.5)
        return v.sum() + a.sum() + f.sum() + n.sum(), i

    compiled = compiler.compile(fn)
    rng = np.random.default_rng(1)
    for i in range(4):
        x = eager.tensor(rng.standard_normal((2, 3, 7, 6)).astype(np.float32))
        (s, idx), (es, eidx) = compiled(x), fn(x)
        if i < 2:
            compiler.wait()
        np.testing.assert_allclose(s.item(), es.item(), rtol=1e-5)
        np.testing.assert_array_equal(idx.numpy(), eidx.numpy())
    assert compiled.stats()["hits"] >= 2
