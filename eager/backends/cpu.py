"""``eager.backends.cpu``."""


def get_cpu_capability() -> str:
    """The vector instruction set PyTorch would report; eager leaves that to NumPy and
    Numba, so: ``"DEFAULT"``."""
    return "DEFAULT"
