"""``eager.nn``: modules, parameters, layers, losses, ``functional`` and ``init``, with
PyTorch's names and behaviour."""

from . import functional, init  # noqa: F401
from .activation import (  # noqa: F401
                         ELU,
                         GELU,
                         LeakyReLU,
                         LogSoftmax,
                         ReLU,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softplus,
                         Tanh,
)
from .attention import MultiheadAttention  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .layers import Bilinear, Dropout, Embedding, Flatten, Identity, Linear, Unflatten  # noqa: F401
from .loss import (  # noqa
                         BCELoss,
                         BCEWithLogitsLoss,
                         CrossEntropyLoss,
                         HuberLoss,
                         L1Loss,
                         MSELoss,
                         NLLLoss,
                         SmoothL1Loss,
)
from .module import Module  # noqa: F401
from .normalization import BatchNorm1d, LayerNorm  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .recurrent import GRU, LSTM, RNN, RNNBase  # noqa: F401
from .rnn import GRUCell, LSTMCell, RNNCell  # noqa: F401
from .transformer import (  # noqa: F401
                         Transformer,
                         TransformerDecoder,
                         TransformerDecoderLayer,
                         TransformerEncoder,
                         TransformerEncoderLayer,
)
