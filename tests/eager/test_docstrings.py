"""The most used public names carry PyTorch-style docstrings (Args, Shape for modules,
Example), and their examples run: each ``>>>`` block is executed with doctest against
eager (``eager``, ``nn``, ``F`` in scope)."""

import doctest

import pytest

import eager
from eager import nn, optim
from eager.nn import functional as F

DOCUMENTED = {
    "nn.Linear": nn.Linear, "nn.Conv2d": nn.Conv2d, "nn.LayerNorm": nn.LayerNorm,
    "nn.BatchNorm1d": nn.BatchNorm1d, "nn.BatchNorm2d": nn.BatchNorm2d,
    "nn.BatchNorm3d": nn.BatchNorm3d, "nn.Embedding": nn.Embedding,
    "nn.Dropout": nn.Dropout, "nn.LSTM": nn.LSTM, "nn.GRU": nn.GRU,
    "nn.MultiheadAttention": nn.MultiheadAttention,
    "nn.CrossEntropyLoss": nn.CrossEntropyLoss, "nn.MSELoss": nn.MSELoss,
    "optim.SGD": optim.SGD, "optim.Adam": optim.Adam, "optim.AdamW": optim.AdamW,
    "optim.LBFGS": optim.LBFGS, "no_grad": eager.no_grad,
    "Tensor.backward": eager.Tensor.backward, "F.cross_entropy": F.cross_entropy,
    "tensor": eager.tensor, "zeros": eager.zeros, "randn": eager.randn,
}
MODULES = {k for k in DOCUMENTED if k.startswith("nn.")}
# examples that need a model/data in scope (optimizers) are not run
RUNNABLE = sorted(set(DOCUMENTED) - {"optim.SGD", "optim.Adam", "optim.AdamW",
                                     "optim.LBFGS"})


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_docstring_sections(name):
    doc = DOCUMENTED[name].__doc__ or ""
    assert "Example::" in doc, name
    if name not in ("no_grad",):
        assert "Args:" in doc, name
    if name in MODULES:
        assert "Shape:" in doc, name


@pytest.mark.parametrize("name", RUNNABLE)
def test_docstring_example_runs(name):
    eager.manual_seed(0)
    globs = {"eager": eager, "nn": nn, "F": F}
    parser = doctest.DocTestParser()
    test = parser.get_doctest(DOCUMENTED[name].__doc__, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} of {runner.tries} failed"
