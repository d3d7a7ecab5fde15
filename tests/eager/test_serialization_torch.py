"""Checkpoints across PyTorch and eager: files written by ``torch.save`` load here and give
torch's outputs; files written by ``eager.save`` load in ``torch.load(weights_only=True)``
and give ours.  Plus the restricted unpickler (a malicious pickle must not run), crafted
files, ``map_location``, whole-module pickles, ``eager.tensor(torch_tensor)`` and
safetensors.  Tests needing torch or safetensors skip without them."""

from __future__ import annotations

import io
import os
import pathlib
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import eager
import eager.serialization as ser
from eager import nn


def _zip_with_pickle(path, pkl: bytes, extra: dict | None = None):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
        for k, v in (extra or {}).items():
            zf.writestr(k, v)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


class _EvilSystem:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


# -- plain behaviour (no torch needed) ------------------------------------------------

def test_malicious_pickle_does_not_run(tmp_path):
    for cls in (_Evil, _EvilSystem):
        marker = tmp_path / f"pwned-{cls.__name__}"
        path = tmp_path / f"{cls.__name__}.pt"
        _zip_with_pickle(path, pickle.dumps({"w": cls(str(marker))}, protocol=2))
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            eager.load(path)
        assert not marker.exists()
        with pytest.raises(pickle.UnpicklingError):
            eager.load(path, weights_only=True, map_location="cpu")
        assert not marker.exists()


def test_malicious_pickle_inside_eager_checkpoint(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "m.pt"
    eager.save({"w": eager.ones(2), "evil": _Evil(str(marker))}, path)
    with pytest.raises(pickle.UnpicklingError, match="not an allowed global"):
        eager.load(path)
    assert not marker.exists()
    eager.load(path, weights_only=False)  # trusted: runs
    assert marker.exists()


def test_save_module_loads_only_without_weights_only(tmp_path):
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    eager.save(m, path)
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        eager.load(path)
    m2 = eager.load(path, weights_only=False)
    x = eager.randn(5, 3)
    np.testing.assert_array_equal(m2(x).detach().numpy(), m(x).detach().numpy())
    assert isinstance(m2[0].weight, nn.Parameter)


def test_safe_globals(tmp_path):
    path = tmp_path / "c.pt"
    eager.save({"c": _Point(1, 2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="_Point"):
        eager.load(path)
    with ser.safe_globals([_Point]):
        assert eager.load(path)["c"] == _Point(1, 2)
    with pytest.raises(pickle.UnpicklingError):
        eager.load(path)
    ser.add_safe_globals([_Point])
    try:
        assert _Point in ser.get_safe_globals()
        assert eager.load(path)["c"] == _Point(1, 2)
    finally:
        ser.clear_safe_globals()


class _Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)


def test_round_trip_views_dtypes_containers(tmp_path):
    x = eager.arange(12.0).reshape(3, 4)
    obj = {"t": x, "v": x[:, 1:3], "vt": x.t(), "p": nn.Parameter(eager.ones(2)),
           "bf": eager.ones(3, dtype=eager.bfloat16), "b": eager.tensor([True, False]),
           "e": eager.zeros(0, 3), "s": eager.tensor(2.5), "sz": eager.Size([2, 3]),
           "dev": eager.device("cpu"), "dt": eager.float16, "set": {1, 2},
           "bytes": b"\x00\xff", "od": OrderedDict(a=1), "nested": [(1, {"k": [x]})]}
    path = tmp_path / "a.pt"
    eager.save(obj, path)
    got = eager.load(path)
    for k in ("t", "v", "vt", "bf", "b", "e", "s"):
        assert got[k].dtype == obj[k].dtype and got[k].shape == obj[k].shape
        np.testing.assert_array_equal(got[k].float().numpy(), obj[k].float().numpy())
    assert isinstance(got["p"], nn.Parameter) and got["p"].requires_grad
    assert got["sz"] == eager.Size([2, 3]) and got["dev"] == eager.device("cpu")
    assert got["dt"] is eager.float16 and got["set"] == {1, 2} and got["bytes"] == b"\x00\xff"
    assert type(got["od"]) is OrderedDict
    assert got["nested"][0][1]["k"][0] is got["t"]  # one object stays one object


def test_crafted_files_raise_clear_errors(tmp_path):
    good = tmp_path / "good.pt"
    eager.save({"w": eager.ones(4)}, good)
    with zipfile.ZipFile(good) as zf:
        pkl = zf.read("archive/data.pkl")
        data = zf.read("archive/data/0")
    # a storage entry missing
    _zip_with_pickle(tmp_path / "nostorage.pt", pkl)
    with pytest.raises(pickle.UnpicklingError, match="no entry archive/data/0"):
        eager.load(tmp_path / "nostorage.pt")
    # a storage shorter than it says
    _zip_with_pickle(tmp_path / "short.pt", pkl, {"archive/data/0": data[:8]})
    with pytest.raises(pickle.UnpicklingError, match="truncated or crafted"):
        eager.load(tmp_path / "short.pt")
    # a tensor reaching past its storage (size 4 -> 9)
    big = pkl.replace(b"K\x04\x85", b"K\x09\x85")
    assert big != pkl
    _zip_with_pickle(tmp_path / "past.pt", big, {"archive/data/0": data})
    with pytest.raises(pickle.UnpicklingError, match="reaches element"):
        eager.load(tmp_path / "past.pt")
    # truncated pickle
    _zip_with_pickle(tmp_path / "trunc.pt", pkl[:len(pkl) // 2], {"archive/data/0": data})
    with pytest.raises(pickle.UnpicklingError):
        eager.load(tmp_path / "trunc.pt")
    # a persistent id of the wrong form
    _zip_with_pickle(tmp_path / "pid.pt", b"\x80\x02X\x03\x00\x00\x00abcQ.")
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        eager.load(tmp_path / "pid.pt")
    # bytearray(<huge int>) would allocate: refused
    _zip_with_pickle(tmp_path / "alloc.pt",
                     b"\x80\x02c__builtin__\nbytearray\n\x8a\x06\x00\x00\x00\x00\x00\x01\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="bytearray"):
        eager.load(tmp_path / "alloc.pt")
    # deep nesting: no RecursionError escapes
    deep = b"\x80\x02" + b"]" * 200000 + b"a" * 199999 + b"."
    _zip_with_pickle(tmp_path / "deep.pt", deep)
    try:
        eager.load(tmp_path / "deep.pt")
    except pickle.UnpicklingError:
        pass
    # a zip that is not a checkpoint
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.md", "hi")
    with pytest.raises(pickle.UnpicklingError, match="without a data.pkl"):
        eager.load(tmp_path / "other.zip")
    # PyTorch's legacy format and a plain pickle
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(pickle.UnpicklingError, match="plain pickle"):
        eager.load(tmp_path / "plain.pkl")


def test_map_location_forms(tmp_path):
    path = tmp_path / "m.pt"
    eager.save({"w": eager.ones(2)}, path)
    seen = []

    def fn(storage, loc):
        seen.append(loc)
        return storage

    for ml in ("cpu", eager.device("cpu"), {"cpu": "cpu"}, fn, lambda s, loc: s.cpu(),
               lambda s, loc: None):
        assert eager.load(path, map_location=ml)["w"].tolist() == [1.0, 1.0]
    assert seen == ["cpu"]
    # a checkpoint saved on CUDA loads on the CPU with map_location, and says so without
    with zipfile.ZipFile(path) as zf:
        pkl = zf.read("archive/data.pkl").replace(b"X\x03\x00\x00\x00cpu",
                                                  b"X\x06\x00\x00\x00cuda:0")
        data = zf.read("archive/data/0")
    _zip_with_pickle(tmp_path / "cuda.pt", pkl, {"archive/data/0": data})
    if not eager.cuda.is_available():
        with pytest.raises(RuntimeError, match="map_location"):
            eager.load(tmp_path / "cuda.pt")
    for ml in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s):
        if callable(ml) and not eager.cuda.is_available():
            ml = lambda s, loc: s.cpu()  # noqa: E731
        got = eager.load(tmp_path / "cuda.pt", map_location=ml)["w"]
        assert got.device == eager.device("cpu") and got.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="map_location"):
        eager.load(path, map_location=3)


def test_safetensors_round_trip(tmp_path):
    pytest.importorskip("safetensors")
    from eager.utils.safetensors import load_file, load_model, save_file, save_model
    tensors = {"a": eager.randn(2, 3), "b": eager.ones(2, dtype=eager.bfloat16),
               "c": eager.arange(4), "d": eager.tensor([True, False])}
    save_file(tensors, tmp_path / "x.safetensors", metadata={"k": "v"})
    got = load_file(tmp_path / "x.safetensors")
    for k, t in tensors.items():
        assert got[k].dtype == t.dtype
        np.testing.assert_array_equal(got[k].float().numpy(), t.float().numpy())
    with pytest.raises(pickle.UnpicklingError, match="safetensors"):
        eager.load(tmp_path / "x.safetensors")
    m = nn.Linear(3, 2)
    save_model(m, tmp_path / "m.safetensors")
    m2 = nn.Linear(3, 2)
    load_model(m2, tmp_path / "m.safetensors")
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())


# -- against PyTorch ------------------------------------------------------------------

def _torch_model(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                               torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 25, 3))


def _eager_model():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 25, 3))


def test_torch_checkpoint_loads_and_gives_torch_outputs(tmp_path):
    torch = pytest.importorskip("torch")
    tm = _torch_model(torch)
    tm.train()
    tm(torch.randn(8, 2, 5, 5))  # running stats move
    tm.eval()
    opt = torch.optim.Adam(tm.parameters(), lr=1e-2)
    tm(torch.randn(4, 2, 5, 5)).sum().backward()
    opt.step()
    path = tmp_path / "torch.pt"
    torch.save({"model": tm.state_dict(), "opt": opt.state_dict(), "epoch": 3,
                "perm": torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1),
                "exp": torch.ones(3).expand(2, 3), "bf": torch.ones(2, dtype=torch.bfloat16),
                "p": torch.nn.Parameter(torch.ones(2))}, path)
    ck = eager.load(path)
    m = _eager_model().eval()
    m.load_state_dict(ck["model"])
    xs = np.random.default_rng(0).standard_normal((3, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        expect = tm(torch.tensor(xs)).numpy()
    np.testing.assert_allclose(m(eager.tensor(xs)).detach().numpy(), expect, rtol=1e-5,
                               atol=1e-6)
    assert ck["epoch"] == 3
    np.testing.assert_array_equal(ck["perm"].numpy(),
                                  torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1).numpy())
    assert ck["exp"].tolist() == [[1.0] * 3] * 2
    assert ck["bf"].dtype == eager.bfloat16 and isinstance(ck["p"], nn.Parameter)
    state = ck["opt"]["state"][0]
    np.testing.assert_array_equal(state["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())
    # the optimizer state loads into our Adam
    adam = eager.optim.Adam(m.parameters(), lr=1e-2)
    adam.load_state_dict(ck["opt"])


def test_eager_checkpoint_loads_in_torch_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    eager.manual_seed(0)
    m = _eager_model()
    m.train()
    m(eager.randn(8, 2, 5, 5))
    m.eval()
    path = tmp_path / "ours.pt"
    x = eager.arange(12.0).reshape(3, 4)
    eager.save({"model": m.state_dict(), "epoch": 7, "v": x[:, 1:3], "t": x,
                "bf": eager.ones(2, dtype=eager.bfloat16), "sz": eager.Size([1, 2]),
                "dt": eager.float64, "nested": [(1, 2.5, "s", None)]}, path)
    ck = torch.load(path, weights_only=True)
    tm = _torch_model(torch).eval()
    tm.load_state_dict(ck["model"])
    xs = np.random.default_rng(1).standard_normal((3, 2, 5, 5)).astype(np.float32)
    with torch.no_grad():
        got = tm(torch.tensor(xs)).numpy()
    np.testing.assert_allclose(got, m(eager.tensor(xs)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert ck["epoch"] == 7 and ck["nested"] == [(1, 2.5, "s", None)]
    assert ck["v"].tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]]
    assert ck["v"].untyped_storage().data_ptr() == ck["t"].untyped_storage().data_ptr()
    assert ck["bf"].dtype == torch.bfloat16 and ck["sz"] == torch.Size([1, 2])
    assert ck["dt"] is torch.float64
    ck = torch.load(path, weights_only=True, mmap=True)  # aligned storages
    assert ck["t"].tolist() == x.tolist()


def test_eager_optimizer_state_loads_in_torch(tmp_path):
    torch = pytest.importorskip("torch")
    m = nn.Linear(3, 2)
    opt = eager.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(eager.randn(4, 3)).sum().backward()
    opt.step()
    eager.save(opt.state_dict(), tmp_path / "opt.pt")
    sd = torch.load(tmp_path / "opt.pt", weights_only=True)
    tm = torch.nn.Linear(3, 2)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    topt.load_state_dict(sd)
    np.testing.assert_array_equal(topt.state_dict()["state"][0]["momentum_buffer"].numpy(),
                                  opt.state_dict()["state"][0]["momentum_buffer"].numpy())


def test_torch_full_model_pickle_needs_weights_only_false(tmp_path):
    torch = pytest.importorskip("torch")
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    torch.save(tm, tmp_path / "full.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        eager.load(tmp_path / "full.pt")
    m = eager.load(tmp_path / "full.pt", weights_only=False)
    xs = np.ones((2, 3), np.float32)
    with torch.no_grad():
        expect = tm(torch.tensor(xs)).numpy()
    np.testing.assert_allclose(m(eager.tensor(xs)).detach().numpy(), expect, rtol=1e-6)


def test_torch_malicious_checkpoint_does_not_run(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    torch.save({"w": torch.ones(2), "x": _Evil(str(marker))}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError):
        eager.load(tmp_path / "evil.pt")
    assert not marker.exists()


def test_tensor_from_torch_tensor():
    torch = pytest.importorskip("torch")
    for t in (torch.randn(2, 3), torch.arange(10)[::3], torch.ones(2, dtype=torch.bfloat16),
              torch.tensor(True), torch.randn(3, requires_grad=True) * 2,
              torch.randn(3, 4).t()):
        e = eager.tensor(t)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.float().numpy(), t.detach().float().numpy())
    e = eager.tensor(torch.ones(2), requires_grad=True)
    assert e.requires_grad and e.is_leaf
    assert eager.as_tensor(torch.ones(2, dtype=torch.float64)).dtype == eager.float64


def test_safetensors_cross_torch(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from safetensors.torch import load_file as tload
    from safetensors.torch import save_file as tsave

    from eager.utils.safetensors import load_file, save_file
    tsave({"w": torch.randn(3, 2), "h": torch.ones(2, dtype=torch.bfloat16)},
          str(tmp_path / "t.safetensors"))
    got = load_file(tmp_path / "t.safetensors")
    ref = tload(str(tmp_path / "t.safetensors"))
    np.testing.assert_array_equal(got["w"].numpy(), ref["w"].numpy())
    assert got["h"].dtype == eager.bfloat16
    save_file({"a": eager.arange(6.0).reshape(2, 3)}, tmp_path / "e.safetensors")
    assert tload(str(tmp_path / "e.safetensors"))["a"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_io_buffers():
    buf = io.BytesIO()
    eager.save([eager.arange(3)], buf)
    buf.seek(0)
    assert eager.load(buf)[0].tolist() == [0, 1, 2]
