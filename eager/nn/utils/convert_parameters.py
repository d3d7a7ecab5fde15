"""``parameters_to_vector`` (every parameter flattened into one 1-D tensor) and
``vector_to_parameters`` (the inverse: slices of a vector become the parameters' data)."""

from __future__ import annotations

from ...fn.shape import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """One vector of all ``parameters``, flattened in order (differentiable)."""
    return cat([param.reshape(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Set the data of ``parameters`` from consecutive slices of ``vec`` (in order)."""
    if not isinstance(vec, Tensor):
        t = type(vec)
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
