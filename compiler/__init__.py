"""compiler: @compile traces eager code into IR and fused Numba kernels."""
