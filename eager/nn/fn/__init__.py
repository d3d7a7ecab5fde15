"""Functional forms of layers, one module per family (activation, linear, convolution,
pooling, normalization, dropout, losses, sparse lookups, attention, vision, distance,
grids); :mod:`eager.nn.functional` re-exports each family's ``__all__`` under PyTorch's
names."""
