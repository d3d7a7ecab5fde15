"""``eager.func``: PyTorch's composable function transforms (``torch.func``).

``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``hessian``, ``functional_call`` and
``vmap``.
``vmap`` runs the function once on whole batches: each op dispatches through its
batching rule (:mod:`eager.func.batching`, one table), never a loop over samples.
"""

from .batching import RULES
from .transforms import functional_call, grad, grad_and_value, hessian, jacrev, vjp
from .vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call",
           "RULES"]
