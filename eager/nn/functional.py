"""``eager.nn.functional``: the functional forms of layers, activations and losses,
with PyTorch's names and signatures.  This module is the namespace only: each family
lives in :mod:`eager.nn.fn` (``activation``, ``linear``, ``conv``, ``pooling``,
``normalization``, ``dropout``, ``loss``, ``sparse``, ``attention``, ...), and every name
in a family's ``__all__`` is re-exported here.

Everything is composed of ops that go through the dispatch point (a compiler tracer
records each one); random draws (dropout) come from the ``bernoulli`` factory op so a
compiled function redraws on every call.
"""

from __future__ import annotations

from .fn import activation as _activation
from .fn import attention as _attention
from .fn import conv as _conv
from .fn import distance as _distance
from .fn import dropout as _dropout
from .fn import embedding_bag as _embedding_bag
from .fn import extra_losses as _extra_losses
from .fn import grid as _grid
from .fn import gumbel as _gumbel
from .fn import linear as _linear
from .fn import loss as _loss
from .fn import normalization as _normalization
from .fn import pooling as _pooling
from .fn import sparse as _sparse
from .fn import vision as _vision
from .fn.activation import *  # noqa: F403
from .fn.attention import *  # noqa: F403
from .fn.conv import *  # noqa: F403
from .fn.distance import *  # noqa: F403
from .fn.dropout import *  # noqa: F403
from .fn.embedding_bag import *  # noqa: F403
from .fn.extra_losses import *  # noqa: F403
from .fn.grid import *  # noqa: F403
from .fn.gumbel import *  # noqa: F403
from .fn.linear import *  # noqa: F403
from .fn.loss import *  # noqa: F403
from .fn.normalization import *  # noqa: F403
from .fn.pooling import *  # noqa: F403
from .fn.sparse import *  # noqa: F403
from .fn.vision import *  # noqa: F403

_FAMILIES = (_activation, _attention, _conv, _distance, _dropout, _embedding_bag, _extra_losses,
             _grid, _gumbel, _linear, _loss, _normalization, _pooling, _sparse, _vision)
__all__ = sorted({name for family in _FAMILIES for name in family.__all__})
