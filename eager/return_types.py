"""Named tuples returned by functions with several outputs, as ``torch.return_types``:
``values, indices = eager.sort(x)`` or ``eager.sort(x).values``."""

from __future__ import annotations

from collections import namedtuple


def _result(name: str, fields: str):
    cls = namedtuple(name, fields)
    cls.__module__ = __name__
    return cls


sort = _result("sort", "values indices")
topk = _result("topk", "values indices")
kthvalue = _result("kthvalue", "values indices")
slogdet = _result("slogdet", "sign logabsdet")
qr = _result("qr", "Q R")
svd = _result("svd", "U S V")
linalg_slogdet = _result("linalg_slogdet", "sign logabsdet")
linalg_qr = _result("linalg_qr", "Q R")
linalg_svd = _result("linalg_svd", "U S Vh")
linalg_eigh = _result("linalg_eigh", "eigenvalues eigenvectors")
linalg_inv_ex = _result("linalg_inv_ex", "inverse info")
linalg_solve_ex = _result("linalg_solve_ex", "result info")
linalg_cholesky_ex = _result("linalg_cholesky_ex", "L info")
linalg_lstsq = _result("linalg_lstsq", "solution residuals rank singular_values")
median = _result("median", "values indices")
nanmedian = _result("nanmedian", "values indices")
mode = _result("mode", "values indices")
aminmax = _result("aminmax", "min max")
