"""``eager.backends``: PyTorch's backend flags (``cudnn``, ``cuda``, ``mps``, ``mkl``,
``mkldnn``, ``openmp``, ``cpu``) as attributes that scripts can read and set.

None of them changes what eager computes: there is no cuDNN, TF32 or MPS here (CUDA
tensors run eager's own kernels).  They exist so that boilerplate such as
``torch.backends.cudnn.benchmark = True`` or ``torch.backends.mps.is_available()`` runs.
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
