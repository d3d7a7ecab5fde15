"""The op set.  Importing this package registers every op (see :mod:`eager.ops.base`)."""

from . import (  # noqa: F401
    attention,
    base,
    conv,
    decomp,
    device,
    elementwise,
    factory,
    index,
    linalg,
    loss,
    norm,
    pad,
    recurrent,
    reduce,
    scan,
    shape,
    solve,
    sort,
    window,
)
from .base import OPS, A, Op  # noqa: F401
