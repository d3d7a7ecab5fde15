"""``eager.nn``: modules, parameters, layers, losses, ``functional`` and ``init``, with
PyTorch's names and behaviour."""

# isort: skip_file
# (the import of .modules at the end must stay last: it re-exports the names above)

from . import functional, init, parallel, utils  # noqa: F401
from .activation import (  # noqa: F401
                         CELU,
                         ELU,
                         GLU,
                         Hardshrink,
                         Hardsigmoid,
                         Hardswish,
                         Hardtanh,
                         LogSigmoid,
                         Mish,
                         PReLU,
                         ReLU6,
                         RReLU,
                         SELU,
                         Softmax2d,
                         Softmin,
                         Softshrink,
                         Softsign,
                         Tanhshrink,
                         Threshold,
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
from .container import (  # noqa: F401
                         ModuleDict,
                         ModuleList,
                         ParameterDict,
                         ParameterList,
                         Sequential,
)
from .conv import *  # noqa: F403 (Conv1d/2d/3d, ConvTranspose1d/2d/3d)
from .dropout import (AlphaDropout, Dropout1d, Dropout2d, Dropout3d,  # noqa: F401
                      FeatureAlphaDropout, PixelShuffle, PixelUnshuffle)
from .distance import *  # noqa: F403 (CosineSimilarity, PairwiseDistance)
from .fold import *  # noqa: F403 (Fold, Unfold)
from .layers import Bilinear, Dropout, Embedding, Flatten, Identity, Linear, Unflatten  # noqa: F401
from .loss import (  # noqa
                         BCELoss,
                         BCEWithLogitsLoss,
                         CrossEntropyLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MSELoss,
                         NLLLoss,
                         SmoothL1Loss,
)
from .module import Module  # noqa: F401
from .normalization import (  # noqa: F401
                         BatchNorm1d,
                         BatchNorm2d,
                         BatchNorm3d,
                         GroupNorm,
                         InstanceNorm1d,
                         InstanceNorm2d,
                         InstanceNorm3d,
                         LayerNorm,
)
from .padding import *  # noqa: F403 (ZeroPad, ConstantPad, ReflectionPad, ...)
from .parameter import Parameter  # noqa: F401
from .pooling import *  # noqa: F403 (MaxPool, AvgPool, AdaptiveAvgPool, AdaptiveMaxPool)
from .recurrent import GRU, LSTM, RNN, RNNBase  # noqa: F401
from .rnn import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401
from .transformer import (  # noqa: F401
                         Transformer,
                         TransformerDecoder,
                         TransformerDecoderLayer,
                         TransformerEncoder,
                         TransformerEncoderLayer,
)
from .upsampling import *  # noqa: F403 (Upsample, UpsamplingNearest2d, ...)
from .data_parallel import DataParallel  # noqa: F401
from .embedding_bag import EmbeddingBag  # noqa: F401
from .extra_losses import *  # noqa: F403 (CosineEmbeddingLoss, TripletMarginLoss, ...)
from .sync_batchnorm import SyncBatchNorm  # noqa: F401
# last: eager.nn.modules.* (torch.nn.modules.* import paths) re-export the names above
from . import modules  # noqa: F401, E402
