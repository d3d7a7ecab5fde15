"""Functional forms of layers, one module per family (convolution, pooling, normalization,
vision, distance); :mod:`eager.nn.functional` re-exports them under PyTorch's names."""
