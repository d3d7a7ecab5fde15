"""The op set.  Importing this package registers every op (see :mod:`eager.ops.base`)."""

from . import base, elementwise, factory, index, linalg, loss, recurrent, reduce, shape  # noqa: F401
from .base import OPS, A, Op, T  # noqa: F401
