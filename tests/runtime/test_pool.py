import threading

import numpy as np
import pytest

from runtime.pool import BufferPool


def test_reuse_same_shape_and_dtype():
    pool = BufferPool()
    a = pool.take((3, 4), np.float64)
    assert a.shape == (3, 4) and a.dtype == np.float64 and a.flags.c_contiguous
    assert pool.give(a)
    assert len(pool) == 1 and pool.nbytes == a.nbytes
    b = pool.take((3, 4), "f8")
    assert b is a
    assert len(pool) == 0 and pool.nbytes == 0
    assert (pool.hits, pool.misses) == (1, 1)


def test_int_shape_and_list_shape():
    pool = BufferPool()
    a = pool.take(5, np.float32)
    assert a.shape == (5,)
    pool.give(a)
    assert pool.take([5], np.dtype("float32")) is a


def test_dtype_and_shape_separation():
    pool = BufferPool()
    a = pool.take((8,), np.float64)
    pool.give(a)
    assert pool.take((8,), np.float32) is not a
    assert pool.take((4, 2), np.float64) is not a  # same nbytes, other shape
    assert pool.take((8,), np.int64) is not a  # same itemsize, other dtype
    assert pool.take((8,), np.float64) is a


def test_structured_dtypes_with_same_str_are_separate():
    d1 = np.dtype([("a", "f8"), ("b", "f8")])
    d2 = np.dtype([("x", "i8"), ("y", "f8")])
    assert d1.str == d2.str  # both '|V16'
    pool = BufferPool()
    a = pool.take(3, d1)
    pool.give(a)
    assert pool.take(3, d2) is not a
    assert pool.take(3, d1) is a


def test_per_key_cap():
    pool = BufferPool(max_per_key=2)
    arrs = [np.empty(10) for _ in range(3)]
    assert [pool.give(a) for a in arrs] == [True, True, False]
    assert len(pool) == 2
    assert BufferPool(max_per_key=0).give(np.empty(3)) is False


def test_byte_cap():
    pool = BufferPool(max_bytes=1000, max_per_key=100)
    assert pool.give(np.empty(100))  # 800 bytes
    assert not pool.give(np.empty(100))  # would exceed 1000
    assert pool.give(np.empty(25))  # 200 bytes -> exactly 1000
    assert pool.nbytes == 1000
    pool.take(100)
    assert pool.nbytes == 200
    assert not BufferPool(max_bytes=10).give(np.empty(100))


def test_rejects_views_noncontiguous_readonly_and_double_give():
    pool = BufferPool()
    base = np.empty((4, 4))
    assert not pool.give(base[1:])  # view
    assert not pool.give(base.T.copy(order="F"))  # not C-contiguous
    ro = np.empty(4)
    ro.flags.writeable = False
    assert not pool.give(ro)
    assert not pool.give(np.ma.empty(3))  # subclass
    assert pool.give(base)
    assert not pool.give(base)  # already held
    assert len(pool) == 1


def test_clear_and_repr():
    pool = BufferPool()
    pool.give(np.empty(3))
    pool.clear()
    assert len(pool) == 0 and pool.nbytes == 0
    assert "BufferPool(" in repr(pool)


def test_invalid_limits():
    with pytest.raises(ValueError):
        BufferPool(max_bytes=-1)


def test_threads_never_share_a_buffer():
    pool = BufferPool(max_per_key=64)
    taken: list[int] = []
    lock = threading.Lock()
    errors = []

    def worker():
        for _ in range(500):
            a = pool.take(16)
            with lock:
                if id(a) in taken:  # pragma: no cover
                    errors.append(a)
                taken.append(id(a))
            with lock:
                taken.remove(id(a))
            pool.give(a)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert pool.nbytes == sum(a.nbytes for lst in pool._free.values() for a in lst)
