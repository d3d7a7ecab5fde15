"""eager.utils.data: datasets, samplers, default_collate, DataLoader (with and without
worker processes), random_split and DistributedSampler, against PyTorch where importable."""

import collections
import sys
import types
import warnings

import numpy as np
import pytest

import eager
from eager.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)
from eager.utils.data.distributed import DistributedSampler


def _np(x):
    """Batches (nested lists/tuples/dicts of tensors) as nested NumPy/Python values."""
    if hasattr(x, "detach"):
        return x.detach().numpy()
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_np(v) for v in x) if not hasattr(x, "_fields") else \
            tuple(_np(v) for v in x)
    return x


def _kind(x):
    return "tensor" if hasattr(x, "detach") else type(x)


def _assert_same(a, b):
    """Same structure (container types, tensors where tensors) and values."""
    assert _kind(a) is _kind(b) or {_kind(a), _kind(b)} == {"tensor"}, (a, b)
    if isinstance(a, (list, tuple, dict)):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            for k in a:
                _assert_same(a[k], b[k])
        else:
            assert len(a) == len(b)
            for x, y in zip(a, b):
                _assert_same(x, y)
        return
    a, b = _np(a), _np(b)
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, (a, b)
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        assert a == b


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": eager.tensor([float(i), float(i * i)]), "i": i}

    def __len__(self):
        return self.n


class WorkerTagged(Dataset):
    """Sample i: (i, id of the worker that loaded it, that worker's torch seed)."""

    def __getitem__(self, i):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        return eager.tensor([i, wid]), eager.initial_seed()

    def __len__(self):
        return 7


class Stream(IterableDataset):
    """0..n-1, split between workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class Failing(Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise ValueError("sample 3 is broken")
        return eager.tensor(float(i))

    def __len__(self):
        return 6


# -- datasets ----------------------------------------------------------------------------

def test_tensor_dataset_subset_concat_chain_stack():
    x, y = eager.arange(10.0).reshape(5, 2), eager.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    a, b = ds[2]
    np.testing.assert_array_equal(a.numpy(), [4.0, 5.0])
    assert b.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, eager.arange(4))
    sub = Subset(ds, [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4 and sub[1][1].item() == 0
    assert [s[1].item() for s in sub.__getitems__([1, 0])] == [0, 4]
    cat = ds + Squares(3)
    assert isinstance(cat, ConcatDataset) and len(cat) == 8 and cat.cumulative_sizes == [5, 8]
    assert cat[5]["i"] == 0 and cat[-1]["i"] == 2 and cat[4][1].item() == 4
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat[-9]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream(2)])
    chain = Stream(2) + Stream(3)
    assert isinstance(chain, ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    st = StackDataset(a=Squares(3), b=Squares(3))
    assert st[1]["b"]["i"] == 1 and len(st) == 3
    assert StackDataset(Squares(2), Squares(2))[1][0]["i"] == 1
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_random_split():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=eager.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    got = sorted(p[k]["i"] for p in parts for k in range(len(p)))
    assert got == list(range(10))
    again = random_split(ds, [3, 7], generator=eager.Generator().manual_seed(1))
    assert parts[0].indices == again[0].indices
    other = random_split(ds, [3, 7], generator=eager.Generator().manual_seed(2))
    assert parts[0].indices + parts[1].indices != other[0].indices + other[1].indices
    fr = random_split(Squares(11), [0.5, 0.3, 0.2])
    assert [len(p) for p in fr] == [6, 3, 2]   # floors 5, 3, 2, then the remainder 1 by 1
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [3, 3])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(Squares(2), [0.9, 0.1])


def test_random_split_lengths_match_torch():
    torch = pytest.importorskip("torch")
    for n, fracs in [(11, [0.5, 0.3, 0.2]), (7, [0.25, 0.25, 0.5]), (3, [0.1, 0.9])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = [len(p) for p in random_split(Squares(n), fracs)]
            theirs = [len(p) for p in torch.utils.data.random_split(range(n), fracs)]
        assert ours == theirs


# -- samplers ----------------------------------------------------------------------------

def test_samplers():
    ds = Squares(10)
    assert list(SequentialSampler(ds)) == list(range(10))
    g = eager.Generator().manual_seed(0)
    perm = list(RandomSampler(ds, generator=g))
    assert sorted(perm) == list(range(10))
    assert list(RandomSampler(ds, generator=g)) != perm      # the generator moved on
    long = list(RandomSampler(ds, num_samples=25, generator=g))
    assert len(long) == 25 and sorted(long[:10]) == list(range(10)) \
        and sorted(long[10:20]) == list(range(10))
    repl = list(RandomSampler(ds, replacement=True, num_samples=70, generator=g))
    assert len(repl) == 70 and set(repl) <= set(range(10)) and len(set(repl)) == 10
    eager.manual_seed(3)
    a = list(RandomSampler(ds))
    eager.manual_seed(3)
    assert list(RandomSampler(ds)) == a                   # no generator: the default seeds it
    sub = list(SubsetRandomSampler([7, 8, 9], generator=g))
    assert sorted(sub) == [7, 8, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=g))
    counts = np.bincount(w, minlength=3) / 4000
    np.testing.assert_allclose(counts, [0, 0.25, 0.75], atol=0.03)
    wn = list(WeightedRandomSampler([1.0, 1.0, 3.0, 0.5], 4, replacement=False, generator=g))
    assert sorted(wn) == [0, 1, 2, 3]
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2


SAMPLER_ERRORS = [
    lambda m, ds: m.RandomSampler(ds, replacement=1),
    lambda m, ds: m.RandomSampler(ds, num_samples=0),
    lambda m, ds: m.RandomSampler(ds, num_samples=-2),
    lambda m, ds: m.WeightedRandomSampler([1.0, 2.0], 0),
    lambda m, ds: m.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda m, ds: m.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda m, ds: m.BatchSampler(range(3), 0, False),
    lambda m, ds: m.BatchSampler(range(3), True, False),
    lambda m, ds: m.BatchSampler(range(3), 2, 1),
]


@pytest.mark.parametrize("k", range(len(SAMPLER_ERRORS)))
def test_sampler_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    call = SAMPLER_ERRORS[k]
    import eager.utils.data as ours
    with pytest.raises(Exception) as theirs_err:
        call(torch.utils.data, list(range(5)))
    with pytest.raises(type(theirs_err.value)) as ours_err:
        call(ours, list(range(5)))
    assert str(ours_err.value) == str(theirs_err.value)


# -- collate -----------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")

COLLATE_CASES = [
    [1.5, 2.5], [1, 2, 3], [True, False], ["a", "b"],
    [np.float32(1.0), np.float32(2.0)], [np.array([1, 2]), np.array([3, 4])],
    [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    [(1, "x"), (2, "y")], [[1, 2], [3, 4]], [Point(1, 2.0), Point(3, 4.0)],
    [collections.OrderedDict(z=1, a=2.0), collections.OrderedDict(z=3, a=4.0)],
]


@pytest.mark.parametrize("k", range(len(COLLATE_CASES)))
def test_default_collate_matches_torch(k):
    torch = pytest.importorskip("torch")
    batch = COLLATE_CASES[k]
    ours = default_collate(batch)
    theirs = torch.utils.data.default_collate(batch)
    _assert_same(ours, theirs)


def test_default_collate_tensors_and_errors():
    out = default_collate([eager.ones(2, 3), eager.zeros(2, 3)])
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[0], 1)
    out = default_collate([(eager.tensor(1.0), {"k": eager.tensor([1, 2])})] * 3)
    assert isinstance(out, list) and out[0].shape == (3,) and out[1]["k"].shape == (3, 2)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    c = default_convert((np.array([1.0]), 2, "s"))
    assert isinstance(c, list) and isinstance(c[0], eager.Tensor) and c[1:] == [2, "s"]


# -- DataLoader --------------------------------------------------------------------------

def test_dataloader_batches_in_order():
    dl = DataLoader(Squares(7), batch_size=3)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    np.testing.assert_array_equal(batches[0]["x"].numpy(), [[0, 0], [1, 1], [2, 4]])
    assert batches[2]["i"].tolist() == [6] and batches[0]["i"].dtype == eager.int64
    dl = DataLoader(Squares(7), batch_size=3, drop_last=True)
    assert len(dl) == 2 and [b["i"].tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]]
    # no auto-batching: samples one by one, converted
    one = list(DataLoader(Squares(2), batch_size=None))
    assert one[1]["i"] == 1 and one[1]["x"].shape == (2,)
    # custom collate_fn, sampler and batch_sampler
    dl = DataLoader(Squares(5), batch_size=2, collate_fn=lambda b: [s["i"] for s in b],
                    sampler=[4, 3, 2, 1, 0])
    assert list(dl) == [[4, 3], [2, 1], [0]]
    dl = DataLoader(Squares(5), batch_sampler=[[0, 4], [2]])
    assert [b["i"].tolist() for b in dl] == [[0, 4], [2]] and len(dl) == 2


def test_dataloader_shuffle_generator_and_epochs():
    x = eager.arange(12)
    ds = TensorDataset(x)

    def epoch(dl):
        return [int(v) for (b,) in dl for v in b]

    dl = DataLoader(ds, batch_size=5, shuffle=True, generator=eager.Generator().manual_seed(4))
    e1, e2 = epoch(dl), epoch(dl)
    assert sorted(e1) == list(range(12)) and sorted(e2) == list(range(12)) and e1 != e2
    dl2 = DataLoader(ds, batch_size=5, shuffle=True, generator=eager.Generator().manual_seed(4))
    assert epoch(dl2) == e1
    eager.manual_seed(8)
    d = epoch(DataLoader(ds, batch_size=5, shuffle=True))
    eager.manual_seed(8)
    assert epoch(DataLoader(ds, batch_size=5, shuffle=True)) == d


def test_dataloader_over_a_tensor_dataset_gathers_each_batch_as_collate_would(monkeypatch):
    """Batches of a TensorDataset of plain tensors are made by one gather per tensor: the
    same list of new tensors (values, dtypes, shapes, no graph, not views) as collating
    the samples; a tensor needing a gradient, a subclass, a custom sampler's bad index
    still go sample by sample (the graph, its own __getitem__, the sample's error)."""
    eager.manual_seed(0)
    tensors = (eager.randn(9, 1, 2, 2), eager.arange(9), eager.arange(9) % 2 == 0,
               eager.randn(9, 3, dtype=eager.float64))
    ds = TensorDataset(*tensors)
    for kw in ({"batch_size": 4}, {"batch_size": 4, "shuffle": True, "drop_last": True},
               {"batch_sampler": [[8, -1, 0], [3]]}):
        eager.manual_seed(1)
        got = list(DataLoader(ds, **kw))
        eager.manual_seed(1)
        want = list(DataLoader(ds, collate_fn=lambda b: default_collate(b), **kw))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert type(g) is list and len(g) == len(w) == 4
            for a, b in zip(g, w):
                assert a.dtype == b.dtype and a.shape == b.shape and a.grad_fn is None
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    samples = []
    real = TensorDataset.__getitem__
    monkeypatch.setattr(TensorDataset, "__getitem__",
                        lambda self, i: samples.append(i) or real(self, i))
    batch = next(iter(DataLoader(ds, batch_size=3)))
    assert samples == []                               # gathered, not indexed per sample
    batch[1][0] = 100                                   # a new tensor, not a view
    assert int(tensors[1][0]) == 0

    class Doubled(TensorDataset):
        def __getitem__(self, i):
            return tuple(2 * t[i] for t in self.tensors)
    (b,) = next(iter(DataLoader(Doubled(eager.arange(4)), batch_size=4)))
    assert b.tolist() == [0, 2, 4, 6]
    w = eager.randn(4, 2, requires_grad=True)
    (b,) = next(iter(DataLoader(TensorDataset(w), batch_size=2)))
    assert b.grad_fn is not None                       # stacked samples of w, as torch
    with pytest.raises(IndexError):
        list(DataLoader(TensorDataset(eager.arange(3)), batch_sampler=[[0, 5]]))


def test_dataloader_iterable_dataset():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    dl = DataLoader(Stream(7), batch_size=3, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]] and len(dl) == 2
    assert list(DataLoader(Stream(2), batch_size=None)) == [0, 1]


def test_dataloader_workers_same_batches_and_worker_state():
    g = lambda: eager.Generator().manual_seed(5)  # noqa: E731
    ds = WorkerTagged()
    single = list(DataLoader(ds, batch_size=2, shuffle=True, generator=g()))
    multi = list(DataLoader(ds, batch_size=2, shuffle=True, generator=g(), num_workers=2))
    assert [b[0][:, 0].tolist() for b in multi] == [b[0][:, 0].tolist() for b in single]
    assert all(w == -1 for b in single for w in b[0][:, 1].tolist())
    # batches go round-robin to workers 0, 1, 0, 1; each worker's seed is base_seed + id
    assert [b[0][0, 1].item() for b in multi] == [0, 1, 0, 1]
    seeds = [b[1][0].item() for b in multi]
    assert seeds[0] == seeds[2] and seeds[1] == seeds[3] and seeds[1] == seeds[0] + 1


def test_dataloader_workers_iterable_persistent_and_init_fn():
    dl = DataLoader(Stream(7), batch_size=2, num_workers=2)
    # worker 0 streams 0,2,4,6 and worker 1 streams 1,3,5; batches alternate between them
    assert [b.tolist() for b in dl] == [[0, 2], [1, 3], [4, 6], [5]]
    calls = []
    dl = DataLoader(Squares(5), batch_size=2, num_workers=2, persistent_workers=True,
                    worker_init_fn=calls.append)     # runs in the workers: main sees nothing
    for _ in range(2):
        assert [b["i"].tolist() for b in dl] == [[0, 1], [2, 3], [4]]
    assert calls == []
    dl._iterator._shutdown_workers()


def test_dataloader_worker_exception_reraised():
    dl = DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 1") as e:
        list(dl)
    assert "sample 3 is broken" in str(e.value)
    with pytest.raises(ValueError, match="sample 3 is broken"):
        list(DataLoader(Failing(), batch_size=2))


DATALOADER_ERRORS = [
    lambda m, ds, it: m.DataLoader(ds, num_workers=-1),
    lambda m, ds, it: m.DataLoader(ds, timeout=-1),
    lambda m, ds, it: m.DataLoader(ds, prefetch_factor=2),
    lambda m, ds, it: m.DataLoader(ds, persistent_workers=True),
    lambda m, ds, it: m.DataLoader(it, shuffle=True),
    lambda m, ds, it: m.DataLoader(it, sampler=[0]),
    lambda m, ds, it: m.DataLoader(it, batch_sampler=[[0]]),
    lambda m, ds, it: m.DataLoader(ds, sampler=[0], shuffle=True),
    lambda m, ds, it: m.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
    lambda m, ds, it: m.DataLoader(ds, batch_sampler=[[0]], drop_last=True),
    lambda m, ds, it: m.DataLoader(ds, batch_size=None, drop_last=True),
    lambda m, ds, it: m.DataLoader(ds, num_workers=1, multiprocessing_context="nope"),
    lambda m, ds, it: setattr(m.DataLoader(ds), "batch_size", 4),
    lambda m, ds, it: setattr(m.DataLoader(ds), "dataset", ds),
    lambda m, ds, it: len(m.DataLoader(it)),
]


@pytest.mark.parametrize("k", range(len(DATALOADER_ERRORS)))
def test_dataloader_errors_match_torch(k):
    torch = pytest.importorskip("torch")
    call = DATALOADER_ERRORS[k]

    class TorchStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class OurStream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    import eager.utils.data as ours
    with pytest.raises(Exception) as theirs_err:
        call(torch.utils.data, list(range(4)), TorchStream())
    with pytest.raises(type(theirs_err.value)) as ours_err:
        call(ours, list(range(4)), OurStream())
    assert str(ours_err.value).replace("OurStream", "S") == \
        str(theirs_err.value).replace("TorchStream", "S")


def test_dataloader_lengths_match_torch():
    torch = pytest.importorskip("torch")
    import eager.utils.data as ours
    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
               dict(batch_size=4, shuffle=True), dict(batch_sampler=[[0], [1, 2]])]:
        a = ours.DataLoader(list(range(10)), **kw)
        b = torch.utils.data.DataLoader(list(range(10)), **kw)
        assert len(a) == len(b)
        if "shuffle" not in kw:
            _assert_same(list(a), list(b))


# -- DistributedSampler ------------------------------------------------------------------

def test_distributed_sampler_splits_and_pads():
    ds = list(range(10))
    parts = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False))
             for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    parts = [list(DistributedSampler(ds, num_replicas=3, rank=r, shuffle=False, drop_last=True))
             for r in range(3)]
    assert parts == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    samplers = [DistributedSampler(ds, num_replicas=2, rank=r, seed=7) for r in range(2)]
    e0 = [list(s) for s in samplers]
    assert sorted(e0[0] + e0[1]) == ds and len(samplers[0]) == 5
    for s in samplers:
        s.set_epoch(1)
    e1 = [list(s) for s in samplers]
    assert sorted(e1[0] + e1[1]) == ds and e1 != e0
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(ds, num_replicas=2, rank=2)
    # tiny dataset, many replicas: indices repeat to fill every rank
    assert [list(DistributedSampler([0, 1], num_replicas=5, rank=r, shuffle=False))
            for r in range(5)] == [[0], [1], [0], [1], [0]]


def test_distributed_sampler_matches_torch_without_shuffle():
    torch = pytest.importorskip("torch")
    for n, reps, drop in [(10, 3, False), (10, 3, True), (2, 5, False), (9, 4, True)]:
        for r in range(reps):
            a = DistributedSampler(list(range(n)), reps, r, shuffle=False, drop_last=drop)
            b = torch.utils.data.DistributedSampler(list(range(n)), reps, r, shuffle=False,
                                                    drop_last=drop)
            assert list(a) == list(b) and len(a) == len(b)


def test_distributed_sampler_defaults_from_eager_distributed(monkeypatch):
    fake = types.SimpleNamespace(is_available=lambda: True, get_world_size=lambda: 4,
                                 get_rank=lambda: 3)
    monkeypatch.setitem(sys.modules, "eager.distributed", fake)
    s = DistributedSampler(list(range(8)), shuffle=False)
    assert (s.num_replicas, s.rank) == (4, 3) and list(s) == [3, 7]
    unavailable = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "eager.distributed", unavailable)
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(list(range(8)))
