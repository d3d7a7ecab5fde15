"""Every public ``nn`` module, ``nn.functional`` function, optimizer, LR scheduler and tensor
factory carries a PyTorch-style docstring (``Args:``, ``Shape:`` for layers, ``Example::``),
and its example runs: each ``>>>`` block is executed with doctest against eager (``eager``,
``nn``, ``F`` and ``optim`` in scope).  The lists are enumerated from the namespaces, so a
new public name without a docstring fails here."""

import doctest
import inspect

import pytest

import eager
from eager import construct, factories, nn, optim
from eager.nn import functional as F
from eager.optim import lr_scheduler

#: modules without a ``Shape:`` section (as in PyTorch's docs: containers and the base class)
NO_SHAPE = {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
            "ParameterDict"}


def _public(namespace, prefix, keep):
    out = {}
    for name in dir(namespace):
        obj = getattr(namespace, name)
        if not name.startswith("_") and keep(obj):
            out[f"{prefix}{name}"] = obj
    return out


MODULES = _public(nn, "nn.", lambda o: inspect.isclass(o) and issubclass(o, nn.Module))
FUNCTIONAL = _public(F, "F.", inspect.isfunction)
OPTIMIZERS = _public(optim, "optim.", lambda o: inspect.isclass(o)
                     and issubclass(o, optim.Optimizer))
SCHEDULERS = _public(lr_scheduler, "lr_scheduler.", lambda o: inspect.isclass(o)
                     and o.__module__.startswith("eager.optim.lr_")
                     and o.__name__.endswith(("LR", "Plateau")))
FACTORIES = _public(eager, "", lambda o: inspect.isfunction(o)
                    and o.__module__ in (factories.__name__, construct.__name__))
OTHERS = {"no_grad": eager.no_grad, "Tensor.backward": eager.Tensor.backward}
DOCUMENTED = {**MODULES, **FUNCTIONAL, **OPTIMIZERS, **SCHEDULERS, **FACTORIES, **OTHERS}


def test_the_lists_found_the_namespaces():
    assert len(MODULES) > 90 and len(FUNCTIONAL) > 80 and len(FACTORIES) > 15
    assert {"optim.Adam", "optim.SGD"} <= set(OPTIMIZERS)
    assert {"lr_scheduler.StepLR", "lr_scheduler.ReduceLROnPlateau"} <= set(SCHEDULERS)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_docstring_sections(name):
    doc = inspect.getdoc(DOCUMENTED[name]) or ""
    assert "Example::" in doc, f"{name}: no Example:: section"
    if name != "no_grad":
        assert "Args:" in doc, f"{name}: no Args: section"
    if name in MODULES and name[3:] not in NO_SHAPE:
        assert "Shape:" in doc, f"{name}: no Shape: section"


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_docstring_example_runs(name):
    eager.manual_seed(0)
    globs = {"eager": eager, "nn": nn, "F": F, "optim": optim}
    parser = doctest.DocTestParser()
    test = parser.get_doctest(inspect.getdoc(DOCUMENTED[name]) or "", globs, name, None, 0)
    assert test.examples, f"{name}: the Example:: section has no >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE
                                   | doctest.ELLIPSIS)
    runner.run(test, out=lambda s: None)
    assert runner.failures == 0, f"{name}: {runner.failures} of {runner.tries} failed"
