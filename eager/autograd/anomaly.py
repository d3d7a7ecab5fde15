"""Anomaly detection: NaN/Inf produced in backward raises with the forward traceback."""

from __future__ import annotations

from .._state import STATE, set_anomaly


class detect_anomaly:
    """Context manager (and decorator) recording forward tracebacks and checking backward
    outputs for NaN/Inf."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._prev = []

    def __enter__(self):
        self._prev.append(STATE.anomaly)
        set_anomaly(self.check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly(self._prev.pop())
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def set_detect_anomaly(mode: bool) -> None:
    set_anomaly(mode)


def is_anomaly_enabled() -> bool:
    return STATE.anomaly
