"""``eager.backends.cuda``: ``matmul.allow_tf32`` and friends, and the attention-kernel
switches, kept as settable flags (eager's CUDA kernels compute float32 in float32)."""


class _Matmul:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
    fp32_precision = "ieee"


matmul = _Matmul()
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether eager's CUDA support (numba-cuda) is importable."""
    try:
        import numba.cuda  # noqa: F401
    except Exception:
        return False
    return True


def flash_sdp_enabled() -> bool:
    return _SDP["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _SDP["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _SDP["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _SDP["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _SDP["math"]


def enable_math_sdp(enabled: bool) -> None:
    _SDP["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _SDP["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _SDP["cudnn"] = bool(enabled)
