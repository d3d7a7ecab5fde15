"""``eager.backends.mkl``: not used by eager (NumPy's BLAS does the maths)."""

enabled = False


def is_available() -> bool:
    return False
