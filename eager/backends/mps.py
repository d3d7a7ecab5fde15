"""``eager.backends.mps``: Apple's Metal backend does not exist here."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
