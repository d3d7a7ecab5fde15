"""Public op functions, one module per op family.  Each module lists in ``METHODS`` the
functions bound as Tensor methods and in ``INPLACE`` the ones with a ``name_`` form; an
optional ``FILLS`` maps in-place method names (``normal_``) to functions whose result is
written into the tensor."""

from . import (
    combine,
    decomp,
    elementwise,
    index,
    index_update,
    linalg,
    norms,
    random,
    reduce,
    scan,
    shape,
    solve,
    sort,
)

FAMILIES = [elementwise, reduce, shape, linalg, index, random]
FAMILIES += [sort, scan, index_update, combine, decomp, solve, norms]
# after the families they are composed of (importing them first would start a cycle)
from . import blas, pointwise, stats  # noqa: E402

FAMILIES += [blas, pointwise, stats]
