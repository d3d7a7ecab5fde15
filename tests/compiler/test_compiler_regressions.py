"""Tests for compiler bugs found and fixed; each names what it would have caught."""

import numpy as np

import compiler
import eager
from compiler import compile

SCALE = 2.0


def test_attribute_names_are_not_guarded_as_globals():
    """``co_names`` lists attribute names too (``eager.tanh``, ``x.sum``); a missing global
    once became a guard "global tanh == <missing>" on every call."""
    def f(x):
        return eager.tanh(x).sum() * SCALE

    cf = compile(f, backend="python")
    cf(eager.ones(3))
    text = str(cf.explain())
    assert "global SCALE == 2.0" in text
    assert "global tanh" not in text and "global sum" not in text


def test_write_back_computed_in_place_keeps_storage_and_values():
    """An SGD update whose kernel writes straight into the parameter: the parameter keeps
    its array (views of it see the update) and its values equal eager's."""
    rng = np.random.default_rng(0)
    wc = eager.tensor(rng.standard_normal((64, 64)).astype(np.float32), requires_grad=True)
    we = eager.tensor(wc._data.copy(), requires_grad=True)

    def make(w):
        def step(x):
            w.grad = None
            loss = (eager.tanh(x @ w) ** 2).mean()
            loss.backward()
            with eager.no_grad():
                w.sub_(w.grad * 0.1)
            return loss
        return step

    cf, fe = compile(make(wc), backend="numba"), make(we)
    storage = wc._data
    view = wc.detach()[0]
    for i in range(4):
        x = eager.tensor(rng.standard_normal((8, 64)).astype(np.float32))
        cf(x)
        fe(x)
        if i == 1:
            compiler.wait()  # from here on the fused program runs
        np.testing.assert_allclose(wc._data, we._data, rtol=1e-5, atol=1e-6)
    assert any(path.program.writes_inputs for _, _, path, _ in cf._records), \
        "the update was not computed in place"
    assert wc._data is storage
    np.testing.assert_array_equal(view._data, wc._data[0])
    assert cf.stats()["hits"] >= 2


def test_a_weak_containers_callback_during_a_trace_is_not_a_call_of_the_function():
    """Dropping the last reference to a WeakSet member (or a garbage collection freeing one)
    runs the set's callback at that instruction; the observer took it for a call the traced
    function made into unknown C code (``ReferenceType``) and broke the graph there: every
    call of the LSTM test's step ran in pieces on CPython 3.13 when a collection came during
    its forward.  The callback is garbage-collector machinery, as ``__del__`` is."""
    import weakref

    for make in (weakref.WeakSet, weakref.WeakValueDictionary, weakref.WeakKeyDictionary):
        weak = make()

        class Item:
            pass

        class Holder:
            item = None

        holder = Holder()

        def f(x, holder=holder):
            holder.item = None        # the last reference: the container's callback runs here
            return x * 2.0

        cf = compile(f)
        x = eager.tensor([1.0, 2.0])
        for k in range(4):
            holder.item = Item()
            if isinstance(weak, weakref.WeakSet):
                weak.add(holder.item)
            elif isinstance(weak, weakref.WeakValueDictionary):
                weak[k] = holder.item
            else:
                weak[holder.item] = k
            np.testing.assert_array_equal(cf(x).numpy(), [2.0, 4.0])
            assert holder.item is None and len(weak) == 0
        assert cf.stats()["hits"] == 3, (make.__name__, cf.stats())
