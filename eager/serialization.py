"""``eager.save(obj, f)`` / ``eager.load(f)``: state dicts in NumPy ``.npz`` form.

``obj`` is a nest of dicts (any JSON-able scalar keys), lists, tuples, tensors, NumPy
arrays, numbers, strings, bools and None.  Arrays go into the npz as ``t0, t1, ...``;
the structure goes in as JSON text (entry ``__structure__``), so loading runs no pickle
(``np.load(allow_pickle=False)``).  A tensor that appears twice is stored once and comes
back as one object.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict

import numpy as np

from . import dtypes as _dt
from .tensor import Tensor

__all__ = ["load", "save"]

_FORMAT = "eager.save/1"
_STRUCT = "__structure__"


def save(obj, f) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object), exactly there (no
    ``.npz`` suffix is added)."""
    arrays: dict = {}
    memo: dict = {}

    def enc(x):
        if isinstance(x, Tensor):
            key = memo.get(id(x))
            if key is None:
                key = memo[id(x)] = f"t{len(arrays)}"
                arrays[key] = _storable(x._data)
            out = {"$": "tensor", "key": key}
            if x._data.dtype == _dt.BF16_NP:
                out["dtype"] = "bfloat16"
            if x.requires_grad:
                out["requires_grad"] = True
            from .nn.parameter import Parameter
            if isinstance(x, Parameter):
                out["parameter"] = True
            return out
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "biuf" and x.dtype != _dt.BF16_NP:
                raise TypeError(f"eager.save: cannot store an array of dtype {x.dtype}")
            key = f"t{len(arrays)}"
            arrays[key] = _storable(x)
            if x.dtype == _dt.BF16_NP:
                return {"$": "ndarray", "key": key, "dtype": "bfloat16"}
            return {"$": "ndarray", "key": key}
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, (int, np.integer)):
            return int(x)
        if isinstance(x, (float, np.floating)):
            v = float(x)
            return v if np.isfinite(v) else {"$": "float", "v": repr(v)}
        if isinstance(x, dict):
            return {"$": "odict" if isinstance(x, OrderedDict) else "dict",
                    "items": [[enc_key(k), enc(v)] for k, v in x.items()]}
        if isinstance(x, list):
            return [enc(v) for v in x]
        if isinstance(x, tuple):
            return {"$": "tuple", "items": [enc(v) for v in x]}
        if isinstance(x, _dt.DType):
            return {"$": "dtype", "name": x.name}
        raise TypeError(f"eager.save: cannot store an object of type {type(x).__name__} "
                        "(supported: dict, list, tuple, Tensor, ndarray, int, float, str, bool, "
                        "None)")

    def enc_key(k):
        if k is None or isinstance(k, (bool, str, int, float, np.integer, np.floating)):
            return enc(k)
        if isinstance(k, tuple):
            return enc(k)
        raise TypeError(f"eager.save: unsupported dict key type {type(k).__name__}")

    structure = {"format": _FORMAT, "root": enc(obj)}
    text = json.dumps(structure, separators=(",", ":"))
    arrays[_STRUCT] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _storable(arr):
    """bfloat16 (no npz type of its own) is stored as its bits, uint16; the structure entry
    says ``"dtype": "bfloat16"``."""
    return arr.view(np.uint16) if arr.dtype == _dt.BF16_NP else arr


def _loaded(arr, entry: dict):
    return arr.view(_dt.BF16_NP) if entry.get("dtype") == "bfloat16" else arr


def load(f, map_location=None, weights_only=True, **kwargs):
    """Read what :func:`save` wrote: tensors come back as eager Tensors (Parameters and
    ``requires_grad`` restored)."""
    with np.load(f, allow_pickle=False) as npz:
        if _STRUCT not in npz.files:
            raise RuntimeError("eager.load: not a file written by eager.save (no structure "
                               "entry)")
        structure = json.loads(npz[_STRUCT].tobytes().decode("utf-8"))
        if structure.get("format") != _FORMAT:
            raise RuntimeError(f"eager.load: unknown format {structure.get('format')!r}")
        data = {k: npz[k] for k in npz.files if k != _STRUCT}
    tensors: dict = {}

    def dec(x):
        if isinstance(x, list):
            return [dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        kind = x["$"]
        if kind == "tensor":
            key = x["key"]
            t = tensors.get(key)
            if t is None:
                arr = _loaded(data[key], x)
                if x.get("parameter"):
                    from .nn.parameter import Parameter
                    t = Parameter(Tensor._make(arr), bool(x.get("requires_grad")))
                else:
                    t = Tensor._make(arr)
                    if x.get("requires_grad"):
                        t.requires_grad_(True)
                tensors[key] = t
            return t
        if kind == "ndarray":
            return _loaded(data[x["key"]], x)
        if kind == "float":
            return float(x["v"])
        if kind in ("dict", "odict"):
            items = [(dec_key(k), dec(v)) for k, v in x["items"]]
            return OrderedDict(items) if kind == "odict" else dict(items)
        if kind == "tuple":
            return tuple(dec(v) for v in x["items"])
        if kind == "dtype":
            return _dt.from_name(x["name"])
        raise RuntimeError(f"eager.load: unknown entry kind {kind!r}")

    def dec_key(k):
        v = dec(k)
        return tuple(v) if isinstance(v, list) else v

    return dec(structure["root"])
