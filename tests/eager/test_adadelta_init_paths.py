"""optim.Adadelta against PyTorch step for step, nn.init.orthogonal_, and the
torch.nn.modules.* import paths."""

import numpy as np
import pytest

import eager
from eager import nn


@pytest.mark.parametrize("kw", [{}, {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1},
                                {"maximize": True, "eps": 1e-4}])
def test_adadelta_matches_torch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    xs = rng.standard_normal((6, 4))
    w = nn.Parameter(eager.tensor(w0))
    tw = torch.nn.Parameter(torch.tensor(w0))
    opt = eager.optim.Adadelta([w], **kw)
    topt = torch.optim.Adadelta([tw], **kw)
    for _ in range(5):
        opt.zero_grad()
        topt.zero_grad()
        ((eager.tensor(xs) @ w.t()) ** 2).sum().backward()
        ((torch.tensor(xs) @ tw.t()) ** 2).sum().backward()
        opt.step()
        topt.step()
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
    st, tst = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    for k in ("square_avg", "acc_delta"):
        np.testing.assert_allclose(st[k].numpy(), tst[k].numpy(), rtol=1e-10, atol=1e-14)
    assert float(st["step"]) == float(tst["step"]) == 5


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (6, 2, 2), (4, 4)])
def test_orthogonal_init(shape):
    w = eager.empty(*shape)
    assert nn.init.orthogonal_(w, gain=2.0) is w
    f = w.reshape(shape[0], -1).numpy().astype(np.float64)
    small = f @ f.T if f.shape[0] <= f.shape[1] else f.T @ f
    np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-5)


def test_torch_module_import_paths():
    from eager.nn.modules.batchnorm import BatchNorm2d
    from eager.nn.modules.container import Sequential
    from eager.nn.modules.conv import Conv2d
    from eager.nn.modules.linear import Linear
    from eager.nn.modules.module import Module
    assert Linear is nn.Linear and Conv2d is nn.Conv2d and BatchNorm2d is nn.BatchNorm2d
    assert Module is nn.Module and Sequential is nn.Sequential
