"""eager.save / eager.load: PyTorch's zip checkpoint format (restricted unpickling by
default); the earlier npz + JSON format still loads.  Comparisons with PyTorch are in
test_serialization_torch.py."""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import eager
from eager import nn


def test_round_trip_nested(tmp_path):
    t = eager.tensor([[1.0, 2.0], [3.0, 4.0]])
    obj = {
        "tensor": t,
        "same": t,                                  # shared: stored once, loaded as one
        "ints": eager.tensor([1, 2, 3]),
        "scalar": eager.zeros((), dtype=eager.float64),
        "flag": eager.tensor([True, False]),
        "half": eager.ones(3, dtype=eager.float16),
        "grad": eager.ones(2, requires_grad=True),
        "array": np.arange(4, dtype=np.int32),
        "nums": [1, 2.5, -3, True, None, "text", float("inf"), float("nan")],
        "tuple": (1, (2.0, "x")),
        3: "int key",
        2.5: "float key",
        "nested": OrderedDict([("b", {"c": [eager.tensor(7.5)]}), ("a", [])]),
        "dtype": eager.float64,
    }
    path = tmp_path / "state.pt"
    eager.save(obj, path)
    assert path.exists() and not (tmp_path / "state.pt.npz").exists()
    got = eager.load(path)
    assert set(got) == set(obj)
    np.testing.assert_array_equal(got["tensor"].numpy(), t.numpy())
    assert got["same"] is got["tensor"]
    assert got["ints"].dtype == eager.int64
    assert got["scalar"].shape == () and got["scalar"].dtype == eager.float64
    assert got["flag"].dtype == eager.bool
    assert got["half"].dtype == eager.float16
    assert got["grad"].requires_grad and got["grad"].is_leaf
    assert isinstance(got["array"], np.ndarray) and got["array"].dtype == np.int32
    nums = got["nums"]
    assert nums[:6] == [1, 2.5, -3, True, None, "text"]
    assert type(nums[0]) is int and type(nums[1]) is float and type(nums[3]) is bool
    assert nums[6] == math.inf and math.isnan(nums[7])
    assert got["tuple"] == (1, (2.0, "x"))
    assert got[3] == "int key" and got[2.5] == "float key"
    assert isinstance(got["nested"], OrderedDict) and list(got["nested"]) == ["b", "a"]
    assert got["nested"]["b"]["c"][0].item() == 7.5
    assert got["dtype"] is eager.float64


def test_file_is_torch_zip_layout(tmp_path):
    path = tmp_path / "m.pt"
    eager.save({"w": eager.ones(2)}, path)
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        assert {"archive/data.pkl", "archive/byteorder", "archive/version",
                "archive/data/0"} <= names
        assert z.read("archive/byteorder") == b"little"
        np.testing.assert_array_equal(np.frombuffer(z.read("archive/data/0"), np.float32),
                                      np.ones(2, np.float32))
        info = z.getinfo("archive/data/0")
        # storages are aligned to 64 bytes in the file, as PyTorch writes them
        data_start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        assert data_start % 64 == 0


def test_legacy_npz_format_still_loads(tmp_path):
    structure = {"format": "eager.save/1", "root": {"$": "dict", "items": [
        ["w", {"$": "tensor", "key": "t0", "parameter": True, "requires_grad": True}],
        ["n", 3]]}}
    path = tmp_path / "old.pt"
    with open(path, "wb") as f:
        np.savez(f, t0=np.arange(3, dtype=np.float32),
                 __structure__=np.frombuffer(json.dumps(structure).encode(), np.uint8))
    got = eager.load(path)
    assert isinstance(got["w"], nn.Parameter) and got["w"].tolist() == [0.0, 1.0, 2.0]
    assert got["n"] == 3


def test_file_objects():
    buf = io.BytesIO()
    eager.save([eager.arange(3)], buf)
    buf.seek(0)
    got = eager.load(buf)
    assert got[0].tolist() == [0, 1, 2]


def test_module_state_dict_round_trip(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    model(eager.randn(5, 3))  # update running stats
    eager.save(model.state_dict(), tmp_path / "model.pt")
    model2 = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    sd = eager.load(tmp_path / "model.pt")
    assert list(sd) == list(model.state_dict())
    model2.load_state_dict(sd)
    for (k, a), (_, b) in zip(model.state_dict().items(), model2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
        assert a.dtype == b.dtype
    model.eval()
    model2.eval()
    x = eager.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), model2(x).detach().numpy())


def test_parameters_come_back_as_parameters(tmp_path):
    p = nn.Parameter(eager.randn(2, 2))
    eager.save({"p": p, "frozen": nn.Parameter(eager.ones(1), requires_grad=False)},
               tmp_path / "p")
    got = eager.load(tmp_path / "p")
    assert isinstance(got["p"], nn.Parameter) and got["p"].requires_grad
    assert isinstance(got["frozen"], nn.Parameter) and not got["frozen"].requires_grad


def test_optimizer_state_dict_round_trip(tmp_path):
    params = [nn.Parameter(eager.randn(3)), nn.Parameter(eager.randn(2, 2))]
    opt = eager.optim.Adam(params, lr=0.01, amsgrad=True)
    for _ in range(2):
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
    eager.save(opt.state_dict(), tmp_path / "opt.pt")
    sd = eager.load(tmp_path / "opt.pt")
    assert sorted(sd["state"]) == [0, 1]                      # int keys survive
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)      # tuples survive
    assert sd["state"][0]["step"].shape == () and sd["state"][0]["step"].item() == 2.0
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = eager.optim.Adam(params2, lr=0.01, amsgrad=True)
    opt2.load_state_dict(sd)
    for o, ps in [(opt, params), (opt2, params2)]:
        o.zero_grad()
        sum((p * p).sum() for p in ps).backward()
        o.step()
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_errors(tmp_path):
    import pickle
    with pytest.raises(pickle.PicklingError):
        eager.save({"f": lambda: 1}, tmp_path / "bad")
    np.savez(tmp_path / "plain.npz", a=np.ones(2))
    with pytest.raises(pickle.UnpicklingError, match="NumPy .npz archive"):
        eager.load(tmp_path / "plain.npz")
    np.save(tmp_path / "raw.npy", np.ones(2))
    with pytest.raises(pickle.UnpicklingError, match="raw NumPy .npy"):
        eager.load(tmp_path / "raw.npy")
    (tmp_path / "notes.txt").write_text("hello, these are notes\n")
    with pytest.raises(pickle.UnpicklingError, match="text file .*'hello"):
        eager.load(tmp_path / "notes.txt")
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(pickle.UnpicklingError, match="is empty"):
        eager.load(tmp_path / "empty")
    # an old-format npz holding a pickled object array is refused (no pickle on load)
    with open(tmp_path / "evil.npz", "wb") as f:
        np.savez(f, __structure__=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        eager.load(tmp_path / "evil.npz")
