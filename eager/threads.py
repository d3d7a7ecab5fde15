"""``set_num_threads``/``get_num_threads``: the size of the thread pools eager's CPU work
runs on.

eager computes on the CPU through NumPy; what runs on several threads there is NumPy's
BLAS/LAPACK (matrix products, convolutions as ``im2col`` + one product, decompositions)
and, where loaded, OpenMP.  ``set_num_threads(n)`` limits those pools through
`threadpoolctl <https://github.com/joblib/threadpoolctl>`_ when it is installed (it is a
dependency of most scientific stacks); without it the value is only recorded.
Elementwise NumPy ops are single-threaded either way, and kernels of the compiler are not
affected.  ``get_num_threads()`` returns the last value set, or else the size of the
BLAS pool (the number of CPUs when it cannot be read), as PyTorch returns its intra-op
pool size.
"""

from __future__ import annotations

import operator
import os

try:
    import threadpoolctl as _tpc
except ImportError:  # optional: then the value is only recorded
    _tpc = None

__all__ = ["get_num_threads", "set_num_threads"]

_NUM = [None]      # the value set by set_num_threads
_LIMITER = [None]  # threadpoolctl's limiter, kept so the limit stays in force


def _pool_size() -> int:
    if _tpc is not None:
        sizes = [p.get("num_threads") for p in _tpc.threadpool_info()
                 if p.get("user_api") == "blas" and p.get("num_threads")]
        if sizes:
            return int(max(sizes))
    return os.cpu_count() or 1


def set_num_threads(int) -> None:  # noqa: A002 (PyTorch's parameter name)
    """Sets the number of threads used for intra-op parallelism on the CPU: eager's BLAS/
    LAPACK and OpenMP pools (through ``threadpoolctl`` when installed, else the value is
    only recorded for :func:`get_num_threads`).

    Args:
        int (int): the number of threads, positive.

    Example::

        >>> eager.set_num_threads(2)
        >>> eager.get_num_threads()
        2
    """
    try:
        n = operator.index(int)
    except TypeError:
        raise TypeError(f"set_num_threads(): argument 'int' (position 1) must be int, not "
                        f"{type(int).__name__}") from None
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _NUM[0] = n
    if _tpc is not None:
        _LIMITER[0] = _tpc.threadpool_limits(limits=n)


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism on the CPU (see
    :func:`set_num_threads`).

    Example::

        >>> eager.get_num_threads() >= 1
        True
    """
    return _NUM[0] if _NUM[0] is not None else _pool_size()
