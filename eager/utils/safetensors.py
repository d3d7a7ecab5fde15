"""safetensors files for eager tensors: ``save_file``/``load_file`` (and ``save``/``load`` on
bytes, ``save_model``/``load_model``), the names of ``safetensors.torch``.

The format is read and written by the ``safetensors`` package (an optional dependency:
``pip install safetensors``, or the ``safetensors`` extra of this project) through its
framework-neutral ``serialize``/``deserialize``, so files are interchangeable with
``safetensors.torch`` (PyTorch) and every other framework; bfloat16 included.  A
safetensors file holds a flat ``{name: tensor}`` dict and string metadata only -- nothing
is unpickled, so loading is safe.

Example::

    >>> from eager.utils.safetensors import save_file, load_file
    >>> save_file(model.state_dict(), "model.safetensors")
    >>> model.load_state_dict(load_file("model.safetensors"))
"""

from __future__ import annotations

import os

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor, host

__all__ = ["load", "load_file", "load_model", "save", "save_file", "save_model"]

_CODES = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32",
          np.dtype(np.float16): "F16", np.dtype(_dt.BF16_NP): "BF16",
          np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int16): "I16",
          np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL"}
_DTYPES = {v: k for k, v in _CODES.items()}


def _package():
    try:
        import safetensors
    except ImportError:
        raise ImportError("eager.utils.safetensors needs the safetensors package: pip install "
                          "safetensors (or this project's 'safetensors' extra)") from None
    return safetensors


_NAMES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
          "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
          "BOOL": "bool"}


def _specs(tensors: dict, keep: list) -> dict:
    """The package's input: ``TensorSpec`` objects (safetensors >= 0.8, pointing at arrays
    kept alive in ``keep``) or, before, dicts with the bytes."""
    pkg = _package()
    spec_cls = getattr(pkg, "TensorSpec", None)
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors: expected a dict of name -> Tensor, got "
                        f"{type(tensors).__name__}")
    out = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors: tensor names must be str, got {name!r}")
        if isinstance(t, Tensor):
            arr = host(t.detach()._data)
        elif isinstance(t, np.ndarray):
            arr = t
        else:
            raise TypeError(f"safetensors: {name!r} is a {type(t).__name__}, not a Tensor")
        code = _CODES.get(arr.dtype)
        if code is None:
            raise TypeError(f"safetensors: {name!r} has dtype {arr.dtype}, which has no "
                            "safetensors code here")
        arr = np.ascontiguousarray(arr)
        if spec_cls is not None:
            keep.append(arr)
            out[name] = spec_cls(dtype=_NAMES[code], shape=list(arr.shape),
                                 data_ptr=arr.ctypes.data, data_len=arr.nbytes)
        else:
            out[name] = {"dtype": code, "shape": list(arr.shape),
                         "data": arr.reshape(-1).view(np.uint8).tobytes()}
    return out


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of ``{name: tensor}`` (``metadata``: str -> str)."""
    keep: list = []
    return bytes(_package().serialize(_specs(tensors, keep), metadata=metadata))


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write ``{name: tensor}`` to ``filename`` in the safetensors format.

    Args:
        tensors (dict): names to tensors (each stored as a contiguous copy).
        filename (str or os.PathLike): where to write.
        metadata (dict, optional): str -> str entries stored in the header.
    """
    keep: list = []
    _package().serialize_file(_specs(tensors, keep), os.fspath(filename), metadata=metadata)


def _tensors(items, device) -> dict:
    out = {}
    for name, spec in items:
        code = spec["dtype"]
        npd = _DTYPES.get(code)
        if npd is None:
            raise TypeError(f"safetensors: tensor {name!r} has dtype {code}, which eager does "
                            "not support")
        arr = np.frombuffer(bytearray(spec["data"]), dtype=npd).reshape(spec["shape"])
        t = Tensor._make(arr)
        out[name] = t if str(device) == "cpu" else t.to(device)
    return out


def load(data: bytes, device="cpu") -> dict:
    """``{name: tensor}`` from safetensors bytes."""
    return _tensors(_package().deserialize(data), device)


def load_file(filename, device="cpu") -> dict:
    """``{name: tensor}`` from a safetensors file.

    Args:
        filename (str or os.PathLike): the file.
        device: where the tensors go (``"cpu"`` by default).
    """
    with open(os.fspath(filename), "rb") as fh:
        data = fh.read()
    try:
        return load(data, device)
    except Exception as e:
        if type(e).__name__ == "SafetensorError":
            raise ValueError(f"{os.fspath(filename)} is not a valid safetensors file "
                             f"({e})") from None
        raise


def save_model(model, filename, metadata: dict | None = None) -> None:
    """``save_file(model.state_dict(), filename)``."""
    save_file(dict(model.state_dict()), filename, metadata)


def load_model(model, filename, strict: bool = True, device="cpu"):
    """``model.load_state_dict(load_file(filename), strict=strict)``; returns what
    ``load_state_dict`` returns (missing and unexpected keys)."""
    return model.load_state_dict(load_file(filename, device), strict=strict)
