"""Reduction functions: ``sum``, ``mean``, ``amax``, ``softmax``... with PyTorch's signatures."""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import dispatch
from ..ops import reduce as _red
from .args import norm_dims

def sum(input, dim=None, keepdim: bool = False, *, dtype=None):
    dims = norm_dims(dim, input.ndim, "sum")
    return dispatch(_red.Sum, input, dim=dims, keepdim=bool(keepdim),
                    dtype=None if dtype is None else _dt.to_numpy(dtype))


METHODS = ["sum"]
INPLACE = {}
