"""PyTorch's import path ``torch.nn.modules.rnn`` for eager's classes."""

from ..recurrent import GRU, LSTM, RNN, RNNBase  # noqa: F401
from ..rnn import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401

__all__ = ['GRU', 'GRUCell', 'LSTM', 'LSTMCell', 'RNN', 'RNNBase', 'RNNCell', 'RNNCellBase']
