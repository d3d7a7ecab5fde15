"""PyTorch's import path ``torch.nn.modules.transformer`` for eager's classes."""

from ..transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
