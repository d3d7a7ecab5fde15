"""eager: a NumPy autograd engine with dynamic graphs and PyTorch's API.

    import eager as torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    x.grad          # tensor([2., 4., 6.])
"""

from . import ops as _ops  # noqa: F401  (registers the op set first)
from . import autograd  # noqa: F401
from .dtypes import (DType as dtype, bool_ as bool, float16, float32, float64, int8, int16,  # noqa
                     int32, int64, uint8)
from .dtypes import float16 as half, float32 as float, float64 as double  # noqa: F401
from .dtypes import int32 as int, int64 as long  # noqa: F401
from .tensor import Tensor, Size, device  # noqa: F401
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                       is_grad_enabled, is_inference_mode_enabled)
from .fn.elementwise import *  # noqa: F401,F403
from .fn.reduce import *  # noqa: F401,F403
from .fn.shape import *  # noqa: F401,F403
from .fn.index import *  # noqa: F401,F403
from .fn.linalg import *  # noqa: F401,F403
from .fn.elementwise import abs, pow, round  # noqa: F401
from .fn.reduce import sum  # noqa: F401
from .factories import *  # noqa: F401,F403
from . import methods as _methods  # noqa: F401  (binds Tensor methods)

from .dispatch import dispatch  # noqa: F401
from . import viz  # noqa: F401,E402
from . import nn, optim  # noqa: F401,E402
from .serialization import save, load  # noqa: F401,E402


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def get_default_dtype():
    return float32


def compile(fn=None, **kwargs):
    """Lazy alias of :func:`compiler.compile` (eager never imports the compiler eagerly)."""
    from compiler import compile as _compile
    return _compile(fn, **kwargs)
