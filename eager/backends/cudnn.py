"""``eager.backends.cudnn``: flags kept for scripts; no cuDNN is used here."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    """False: eager does not use cuDNN."""
    return False


def version():
    return None


def is_acceptable(tensor) -> bool:
    return False
