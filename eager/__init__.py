"""eager: a NumPy autograd engine with dynamic graphs and PyTorch's API.

    import eager as torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    x.grad          # tensor([2., 4., 6.])
"""
# ruff: noqa: F401, F403, E402, I001
import sys
# The facade: it gathers the public names.  Each module imports what it needs from the
# layers below it (docs/ARCHITECTURE-eager.md, "Layers"; tests/test_layers.py keeps them).

from . import ops as _ops
from . import autograd
from .dtypes import DType as dtype
from .dtypes import bool_ as bool
from .dtypes import bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8
from .dtypes import float16 as half, float32 as float, float64 as double
from .dtypes import int32 as int, int64 as long
from .tensor import Size, Tensor, device
from .devices import get_default_device, set_default_device
from .autograd import (enable_grad, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from .fn.elementwise import *
from .fn.reduce import *
from .fn.shape import *
from .fn.index import *
from .fn.linalg import *
from .fn.sort import *
from .fn.scan import *
from .fn.index_update import *
from .fn.combine import *
from .fn.decomp import *
from .fn.solve import *
from .fn.norms import *
from .fn.blas import *
from .fn.pointwise import *
from .fn.stats import *
from .threads import get_num_threads, set_num_threads
from .fn.elementwise import abs, pow, round
from .fn.reduce import sum
from .factories import *
from .fn.random import *
from . import random
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from . import methods as _methods
from .dispatch import dispatch
from . import distributed  # before nn: nn.parallel builds on it; never imports mpi4py
from . import nn, optim, viz
from . import utils
from . import linalg, distributions
from . import return_types
from . import func
from .nn.functional import (adaptive_avg_pool1d, avg_pool1d, conv1d, conv2d, conv3d,
                            conv_transpose1d, conv_transpose2d, conv_transpose3d,
                            cosine_similarity, max_pool1d, max_pool2d, max_pool3d,
                            pairwise_distance)
from .serialization import load, save
from . import cuda
from . import amp, cpu
from .amp import autocast, get_autocast_dtype, is_autocast_cpu_enabled, is_autocast_enabled
from .dlpack import from_dlpack
# names of PyTorch's boilerplate (version, finfo, memory formats, legacy tensor types,
# backends flags, accelerator, dense-backed sparse COO, ...): see eager/compat.py
from . import compat as _compat
from .compat import *
from .compat import __version__
from . import backends, accelerator, sparse, serialization
from .cuda import amp as _cuda_amp
autograd.Variable = _compat.Variable
linalg.lu_factor = _compat._linalg_lu_factor
linalg.lu = _compat._linalg_lu


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def get_default_dtype():
    return float32


def compile(fn=None, **kwargs):
    """Lazy alias of :func:`compiler.compile` (eager never imports the compiler eagerly):
    ``torch.compile``'s signature, ``fullgraph``, ``dynamic``, ``backend``, ``mode``,
    ``options``, ``disable``."""
    from compiler import compile as _compile
    return _compile(fn, **kwargs)


def __getattr__(name):
    # eager.compiler: the compiler package, as torch.compiler (reset, disable,
    # is_compiling, wait, explain), imported at first use only (eager/compiler.py)
    if name == "compiler":
        import compiler as _compiler
        sys.modules.setdefault(__name__ + ".compiler", _compiler)
        return _compiler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
