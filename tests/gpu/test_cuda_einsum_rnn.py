"""``einsum`` and the recurrent scan (nn.RNN/GRU/LSTM) run on the device, not through the
host fallback: CPU and CUDA results, dtypes, errors and gradients compared by ``check``, and
``FALLBACK_CALLS`` unchanged for both.  Tiny shapes (the simulator runs ~170 us a thread)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import eager
import eager.cuda.ops as cuda_ops
from eager.nn.utils import rnn as U
from tests.gpu.test_cuda_ops_coverage import _compare, check

RNG = np.random.default_rng(3)


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


#: neither goes through the host fallback in any test here (tests/gpu/conftest.py)
ON_DEVICE = ("einsum", "rnn_scan")


def test_neither_op_is_a_host_fallback():
    assert "einsum" not in cuda_ops.HOST_FALLBACK and "rnn_scan" not in cuda_ops.HOST_FALLBACK


# -- einsum ------------------------------------------------------------------------------------

A23, B34, B24 = _r(2, 3), _r(3, 4), _r(2, 4)
X234, Y245 = _r(2, 3, 4), _r(2, 4, 5)
SQ, SQ3 = _r(3, 3), _r(2, 3, 3)


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [A23, B34]),                     # matmul
    ("ij,jk", [A23, B34]),                         # implicit output
    ("bij,bjk->bik", [X234, Y245]),                # batched
    ("i,j->ij", [A23[0], B34[0]]),                 # outer
    ("ij,kj->ik", [A23, _r(4, 3)]),                # transposed operand
    ("ij,ij->", [A23, A23]),                       # full contraction
    ("ij,ij->ij", [A23, A23]),                     # elementwise
    ("ii->i", [SQ]),                               # diagonal
    ("ii", [SQ]),                                  # trace
    ("bii->b", [SQ3]),                             # batched trace
    ("ij->", [A23]),                               # sum
    ("ij->j", [A23]),
    ("ij->ji", [A23]),                             # transpose (a copy, as the CPU's)
    ("ijk->kj", [X234]),
    ("...ij,...jk->...ik", [X234, Y245]),          # ellipsis
    ("...ij->...ji", [X234]),
    ("bij,jk->bik", [X234, _r(4, 2)]),             # batch against a shared matrix
    ("bij,bjk->bik", [_r(1, 2, 3), _r(3, 3, 2)]),  # size-1 batch broadcasts
    ("ij,j->i", [A23, _r(1)]),                     # size-1 contracted label broadcasts
    ("ijk,ik->j", [X234, B24]),                    # labels summed in one operand and both
    ("iij,jk->ik", [_r(2, 2, 3), B34]),            # diagonal inside a product
    ("ij,jk,kl->il", [A23, B34, _r(4, 2)]),        # three operands
    ("i,ij,jk->k", [_r(2), A23, B34]),
    ("ab,bc,cd,de->ae", [_r(2, 3), _r(3, 2), _r(2, 2), _r(2, 3)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_einsum_matches_cpu_with_gradients(eq, shapes):
    check(lambda *xs: eager.einsum(eq, *xs), *shapes, grad=True, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_einsum_of_integers_and_bools(dtype):
    a = RNG.integers(-3, 4, (2, 3)).astype(dtype)
    b = RNG.integers(-3, 4, (3, 2)).astype(dtype)
    check(lambda x, y: eager.einsum("ij,jk->ik", x, y), a, b)
    check(lambda x, y: eager.einsum("ij,ij->", x, y), a, b.T.copy())
    check(lambda x, y: eager.einsum("i,j->ij", x, y), a[0], b[0])
    check(lambda x: eager.einsum("ij->j", x), a)
    check(lambda x: eager.einsum("ii->", x), a[:, :2].copy())


def test_einsum_of_float64_and_half():
    check(lambda x, y: eager.einsum("ij,jk->ik", x, y), A23.astype(np.float64),
          B34.astype(np.float64), grad=True)
    for dt in (eager.float16, eager.bfloat16):
        check(lambda x, y: eager.einsum("bij,bjk->bik", x.to(dt), y.to(dt)), X234, Y245,
              rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [A23, A23]),          # contracted sizes differ
    ("ij->ik", [A23]),                  # output label not in an operand
    ("ij,jk->iik", [A23, B34]),         # output label twice
    ("ij", [X234]),                     # too few subscripts, no ellipsis
    ("i1->i", [A23[0]]),                # invalid subscript
    ("ij,jk->ik", [A23]),               # more subscripts than operands
    ("ii->i", [A23]),                   # repeated label, sizes differ
    (".ij->i", [A23]),
])
def test_einsum_errors_match_cpu(eq, shapes):
    check(lambda *xs: eager.einsum(eq, *xs), *shapes)


def test_einsum_dtype_mismatch():
    check(lambda x, y: eager.einsum("ij,jk->ik", x, y), A23, B34.astype(np.float64))
    check(lambda x, y: eager.einsum("ij,jk->ik", x, y), A23.astype(np.int64), B34)


# -- the recurrent scan: nn.RNN / GRU / LSTM -----------------------------------------------------

nn = eager.nn
pack, unpack = nn.utils.rnn.pack_padded_sequence, nn.utils.rnn.pad_packed_sequence


def _weighted_sum(ts, dev):
    total = 0
    for t in ts:
        w = np.linspace(-1, 1, max(t.numel(), 1)).reshape(tuple(t.shape)).astype(np.float32)
        total = total + (t * eager.tensor(w, dtype=t.dtype, device=dev)).sum()
    return total


def _run(mod, dev, x, hx, lengths, batch_first):
    """The module's outputs on ``dev`` and the gradients of a weighted sum of them."""
    xi = eager.tensor(x, requires_grad=True, device=dev)
    hi = None if hx is None else tuple(eager.tensor(h, requires_grad=True, device=dev)
                                       for h in hx)
    inp = xi if lengths is None else pack(xi, lengths, batch_first=batch_first,
                                          enforce_sorted=False)
    out, hn = mod(inp, None if hi is None else hi if len(hi) == 2 else hi[0])
    if lengths is not None:
        out = unpack(out, batch_first=batch_first)[0]
    outs = [out] + list(hn if isinstance(hn, tuple) else (hn,))
    _weighted_sum(outs, dev).backward()
    grads = [xi.grad] + ([h.grad for h in hi] if hi else [])
    return outs, grads, {n: p.grad for n, p in mod.named_parameters()}


def _check_module(make, x, hx=None, lengths=None, batch_first=False, rtol=1e-4, atol=1e-5):
    eager.manual_seed(0)
    cpu = make()
    gpu = copy.deepcopy(cpu).to("cuda")
    want = _run(cpu, "cpu", x, hx, lengths, batch_first)
    got = _run(gpu, "cuda", x, hx, lengths, batch_first)
    _compare(want[0], got[0], rtol, atol)
    _compare(want[1], got[1], rtol, atol)
    assert want[2].keys() == got[2].keys()
    for name in want[2]:
        _compare(want[2][name], got[2][name], rtol, atol)


X_TBI = _r(3, 2, 3)          # (T, B, input)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn(nonlinearity):
    _check_module(lambda: nn.RNN(3, 4, nonlinearity=nonlinearity), X_TBI)
    _check_module(lambda: nn.RNN(3, 2, num_layers=2, nonlinearity=nonlinearity,
                                 batch_first=True, bias=False), X_TBI, hx=(_r(2, 3, 2),),
                  batch_first=True)


def test_gru_bidirectional_with_initial_state():
    _check_module(lambda: nn.GRU(3, 2, bidirectional=True), X_TBI, hx=(_r(2, 2, 2),))


def test_lstm_two_layers_bidirectional_batch_first():
    _check_module(lambda: nn.LSTM(3, 2, num_layers=2, bidirectional=True, batch_first=True),
                  X_TBI, hx=(_r(4, 3, 2), _r(4, 3, 2)), batch_first=True)


def test_lstm_with_projection():
    _check_module(lambda: nn.LSTM(3, 3, proj_size=2), X_TBI, hx=(_r(1, 2, 2), _r(1, 2, 3)))


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_packed_variable_length_bidirectional(mode):
    x = _r(3, 3, 2)   # (T, B, input), lengths unsorted
    hx = (_r(2, 3, 2), _r(2, 3, 2)) if mode == "LSTM" else (_r(2, 3, 2),)
    _check_module(lambda: getattr(nn, mode)(2, 2, bidirectional=True), x, hx=hx,
                  lengths=[2, 3, 1])
    _check_module(lambda: getattr(nn, mode)(2, 2), x.transpose(1, 0, 2).copy(),
                  lengths=[1, 3, 2], batch_first=True)


def test_float64_and_unbatched():
    _check_module(lambda: nn.GRU(3, 2).double(), X_TBI.astype(np.float64))
    _check_module(lambda: nn.LSTM(3, 2), X_TBI[:, 0])


def test_pad_sequence_and_invert_permutation_stay_on_the_device():
    seqs = [eager.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2), device="cuda")
            for n in (3, 1, 2)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            got = U.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0,
                                 padding_side=side)
            want = U.pad_sequence([s.cpu() for s in seqs], batch_first=batch_first,
                                  padding_value=-1.0, padding_side=side)
            assert got.is_cuda
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    perm = eager.tensor([2, 0, 1], device="cuda")
    inv = U.invert_permutation(perm)
    assert inv.is_cuda and inv.cpu().tolist() == [1, 2, 0]


def test_einsum_backward_of_a_0d_result_with_a_repeated_label():
    # the gradient puts itself on the diagonal through an identity made on its device
    check(lambda a: eager.einsum("ii", a), np.eye(3, dtype=np.float32) * 2, grad=True)
