"""Public op functions, one module per op family.  Each module lists in ``METHODS`` the
functions bound as Tensor methods and in ``INPLACE`` the ones with a ``name_`` form."""

from . import elementwise, index, linalg, reduce, shape

FAMILIES = [elementwise, reduce, shape, linalg, index]
