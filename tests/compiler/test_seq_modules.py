"""Recurrent and attention modules under ``compiler.compile``: a training step replays
(fused kernels after ``compiler.wait()``) and equals the same step run eagerly."""

from __future__ import annotations

import warnings

import numpy as np

import compiler
import eager
from compiler import CompileWarning
from eager import nn


def run_side_by_side(make, inputs, rtol, atol):
    """Five steps of ``make()``'s step, compiled and eager, on the same inputs and seeds;
    the losses and the parameters afterwards agree."""
    model_e, step_e = make()
    model_c, step_c = make()
    compiled = compiler.compile(step_c)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for i in range(5):
            args = inputs(i)
            eager.manual_seed(100 + i)
            loss_e = step_e(*args)
            eager.manual_seed(100 + i)
            loss_c = compiled(*args)
            np.testing.assert_allclose(float(loss_c), float(loss_e), rtol=rtol, atol=atol)
            if i < 2:
                compiler.wait()
    for (name, p), (_, q) in zip(model_e.named_parameters(), model_c.named_parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=rtol,
                                   atol=atol, err_msg=name)
    stats = compiled.stats()
    assert stats["hits"] >= 3, stats
    assert not [r for r in compiled.explain().fallbacks if "kernel" in r]


def test_lstm_train_step_compiled_equals_eager():
    rng = np.random.default_rng(0)

    def make():
        eager.manual_seed(0)
        lstm = nn.LSTM(4, 6, num_layers=2, bidirectional=True, dropout=0.3)
        opt = eager.optim.SGD(lstm.parameters(), lr=0.1)

        def step(x, h0, c0):
            opt.zero_grad()
            out, (h, c) = lstm(x, (h0, c0))
            loss = (out ** 2).mean() + (h * c).sum()
            loss.backward()
            opt.step()
            return loss
        return lstm, step

    def inputs(i):
        return tuple(eager.tensor(rng.standard_normal(s).astype(np.float32))
                     for s in ((5, 3, 4), (4, 3, 6), (4, 3, 6)))
    run_side_by_side(make, inputs, rtol=1e-5, atol=1e-6)


def test_transformer_encoder_layer_train_step_compiled_equals_eager():
    rng = np.random.default_rng(1)

    def make():
        eager.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
        opt = eager.optim.AdamW(layer.parameters(), lr=1e-2)
        mask = nn.Transformer.generate_square_subsequent_mask(6)

        def step(x):
            opt.zero_grad()
            loss = (layer(x, src_mask=mask, is_causal=True) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return layer, step

    def inputs(i):
        return (eager.tensor(rng.standard_normal((4, 6, 8)).astype(np.float32)),)
    # AdamW divides by the root of tiny second moments: float32 rounding differences of
    # the gradients show up at 1e-4 in the parameters after five steps
    run_side_by_side(make, inputs, rtol=1e-3, atol=1e-4)


def test_packed_gru_with_list_lengths_replays():
    """Packing from a Python list of lengths reads no tensor data, so the function
    replays (one trace per list of lengths, which is part of the cache key)."""
    from eager.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    eager.manual_seed(0)
    gru = nn.GRU(3, 4, bidirectional=True)

    def f(x, lengths):
        out, h = gru(pack_padded_sequence(x, lengths, enforce_sorted=False))
        return pad_packed_sequence(out, batch_first=True)[0], h

    compiled = compiler.compile(f, backend="python")
    rng = np.random.default_rng(2)
    for lengths in ([5, 2, 4], [5, 2, 4], [3, 5, 1], [5, 2, 4]):
        x = eager.tensor(rng.standard_normal((5, 3, 3)).astype(np.float32))
        for got, want in zip(compiled(x, lengths), f(x, lengths)):
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                       rtol=1e-6, atol=1e-7)
    assert compiled.stats()["traces"] == 2 and compiled.stats()["hits"] == 2
