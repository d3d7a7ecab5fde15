"""``eager.optim``: optimizers (``SGD``, ``Adam``, ``AdamW``, ``NAdam``, ``RAdam``, ``Adamax``,
``RMSprop``, ``Adagrad``, ``Adadelta``, ``LBFGS``) and ``lr_scheduler``."""

from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401
