"""Spatial transformers: ``affine_grid`` (the sampling grid of a batch of affine maps) and
``grid_sample`` (sample an image at grid points: bilinear, nearest or bicubic for 4-D
input; trilinear or nearest for 5-D), with PyTorch's arithmetic, padding modes and
errors.

Both are compositions: the grid is a matrix product with a constant base grid, and
sampling gathers the input at the integer neighbours of each point and sums them with
weights computed from the point's coordinates, so the gradients reach both the input and
the grid (none reaches the grid in ``nearest`` mode, as in PyTorch).  Coordinates clipped
to the border get no gradient there, with the border itself counted as outside (as
PyTorch's kernels).
"""

from __future__ import annotations

import itertools
import warnings

from ...dtypes import is_float as _isf
from ...dtypes import scalar_name
from ...factories import linspace, ones
from ...fn import elementwise as _ew
from ...fn import linalg as _la
from ...fn.index import gather
from ...fn.shape import expand, stack
from .args import reshape

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


# -- affine_grid -------------------------------------------------------------------------

def _steps(n: int, align_corners: bool, theta):
    """``n`` coordinates spanning ``[-1, 1]`` (pixel corners) or, without
    ``align_corners``, the pixel centres; one point is at 0."""
    if n <= 1:
        return linspace(0.0, 0.0, 1, dtype=theta.dtype, device=theta.device)
    r = linspace(-1.0, 1.0, n, dtype=theta.dtype, device=theta.device)
    if not align_corners:
        r = _ew.div(_ew.mul(r, n - 1), n)
    return r


def affine_grid(theta, size, align_corners=None):
    r"""The sampling grid of a batch of affine maps, for :func:`grid_sample`: for each
    output pixel, ``theta`` applied to its normalized coordinates ``(x, y, 1)`` (or
    ``(x, y, z, 1)``), ``x`` running over the width and ``y`` the height, from -1 to 1.

    Args:
        theta (Tensor): affine matrices, ``(N, 2, 3)`` for 2-D or ``(N, 3, 4)`` for 3-D.
        size (sequence of int): the output size, ``(N, C, H, W)`` or
            ``(N, C, D, H, W)``.
        align_corners (bool, optional): -1 and 1 are the centres of the corner pixels
            (True) or their outer edges (False); use the same value in
            :func:`grid_sample`. None means False, with a warning. Default: None.

    Returns:
        Tensor: ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``.

    Example::

        >>> theta = eager.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(theta, [1, 1, 2, 3], align_corners=True)
        tensor([[[[-1., -1.],
                  [ 0., -1.],
                  [ 1., -1.]],
        <BLANKLINE>
                 [[-1.,  1.],
                  [ 0.,  1.],
                  [ 1.,  1.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not _isf(theta._data.dtype):
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size_list = [int(s) for s in size]
    if len(size_list) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size_list) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size_list[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size_list) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n, k = size_list[0], len(spatial)
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    # base[..., a] is the coordinate along spatial axis a counted from the last (x = width)
    full = tuple(spatial)
    axes = []
    for a in range(k):
        d = k - 1 - a                       # the dimension of `spatial` that axis a runs on
        view = [1] * k
        view[d] = spatial[d]
        axes.append(expand(reshape(_steps(spatial[d], align_corners, theta), view), full))
    axes.append(ones(full, dtype=theta.dtype, device=theta.device))
    points = 1
    for s in spatial:
        points *= s
    base = reshape(stack(axes, -1), (1, points, k + 1))
    grid = _la.matmul(expand(base, (n, points, k + 1)), theta.transpose(1, 2))
    return reshape(grid, (n, *spatial, k))


# -- grid_sample -------------------------------------------------------------------------

def _unnormalize(coord, size: int, align_corners: bool):
    """Grid coordinates in ``[-1, 1]`` to pixel indices along a dimension of ``size``."""
    if align_corners:
        return _ew.mul(_ew.div(_ew.add(coord, 1), 2), size - 1)
    return _ew.div(_ew.sub(_ew.mul(_ew.add(coord, 1), size), 1), 2)


def _clip(coord, size: int):
    """``coord`` clamped to ``[0, size - 1]``; its gradient passes only strictly inside."""
    inside = _ew.logical_and(_ew.gt(coord, 0), _ew.lt(coord, size - 1))
    return _ew.where(inside, coord, _ew.clamp(coord.detach(), 0, size - 1))


def _reflect(coord, twice_low: int, twice_high: int):
    """Reflect ``coord`` at ``twice_low / 2`` and ``twice_high / 2`` until it lies
    between them."""
    if twice_low == twice_high:
        return _ew.mul(coord, 0.0).detach()
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = _ew.sub(coord, lo)
    d = _ew.where(_ew.lt(d, 0), _ew.neg(d), d)
    extra = _ew.fmod(d, span)
    flips = _ew.floor(_ew.div(d, span)).detach()
    even = _ew.eq(_ew.remainder(flips, 2), 0)
    return _ew.where(even, _ew.add(extra, lo), _ew.add(_ew.sub(span, extra), lo))


def _pad_coordinate(coord, size: int, padding_mode: str, align_corners: bool):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _check(input, grid, mode: str):
    ins, gs = list(input.shape), list(grid.shape)
    nd = input.ndim
    if nd == 0 or grid.ndim == 0 or ins[0] != gs[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {ins} and grid with sizes {gs}")
    if gs[-1] != nd - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd - 2} in last "
                           f"dimension, but got grid with sizes {gs}")
    for i in range(2, nd):
        if ins[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {ins} with dimension {i} "
                               "being empty")
    want = 4 if nd == 4 else 5
    if nd != want or grid.ndim != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number "
                           f"of dimensions, but got input with sizes {ins} and grid with sizes "
                           f"{gs}")
    if nd == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    dt = input._data.dtype
    if not _isf(dt):
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 4 else "grid_sampler_3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(dt)}\'')
    if grid._data.dtype != dt:
        raise RuntimeError(f"expected scalar type {scalar_name(dt)} but found "
                           f"{scalar_name(grid._data.dtype)}")


class _Sampler:
    """Gathers ``input`` (N, C, *spatial) at integer points (one index tensor per spatial
    dimension, each (N, P)), zero outside the input."""

    def __init__(self, input, points: int):
        self.n, self.c = input.shape[0], input.shape[1]
        self.spatial = tuple(input.shape[2:])
        total = 1
        for s in self.spatial:
            total *= s
        self.flat = reshape(input, (self.n, self.c, total))
        self.points = points

    def at(self, idx):
        """``idx``: float tensors of integral values, ``idx[d]`` along ``spatial[d]``.
        Returns ``(values (N, C, P), in_bounds (N, 1, P) in the input's dtype)``."""
        ok = None
        for i, s in zip(idx, self.spatial):
            inside = _ew.logical_and(_ew.ge(i, 0), _ew.le(i, s - 1))
            ok = inside if ok is None else _ew.logical_and(ok, inside)
        linear = None
        for i, s in zip(idx, self.spatial):
            safe = _ew.cast(_ew.where(ok, i, 0.0), "int64")
            linear = safe if linear is None else _ew.add(_ew.mul(linear, s), safe)
        linear = expand(reshape(linear, (self.n, 1, self.points)),
                        (self.n, self.c, self.points))
        values = gather(self.flat, 2, linear)
        return values, _ew.cast(reshape(ok, (self.n, 1, self.points)), self.flat.dtype)


def _cubic_weights(t):
    """The four cubic-convolution weights (``A = -0.75``) of the taps at offsets -1, 0,
    1, 2 for a fractional position ``t``."""
    a = _CUBIC_A

    def near(x):   # |x| <= 1
        return _ew.add(_ew.mul(_ew.mul(_ew.sub(_ew.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x):    # 1 < |x| < 2
        return _ew.sub(_ew.mul(_ew.add(_ew.mul(_ew.sub(_ew.mul(x, a), 5 * a), x), 8 * a), x),
                       4 * a)

    u = _ew.sub(1.0, t)
    return [far(_ew.add(t, 1.0)), near(t), near(u), far(_ew.add(u, 1.0))]


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None):
    r"""Sample ``input`` at the points of ``grid``: ``output[n, :, h, w]`` is ``input[n]``
    interpolated at ``grid[n, h, w] = (x, y)``, normalized coordinates with ``(-1, -1)``
    the top-left corner and ``(1, 1)`` the bottom-right one (5-D input: ``(x, y, z)``
    over width, height and depth).

    Args:
        input (Tensor): ``(N, C, H_in, W_in)`` or ``(N, C, D_in, H_in, W_in)``.
        grid (Tensor): ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``, the
            input's dtype.
        mode (str): ``"bilinear"`` (trilinear for 5-D input), ``"nearest"`` (ties to the
            even index) or ``"bicubic"`` (4-D only). Default: ``"bilinear"``.
        padding_mode (str): the values outside the input: ``"zeros"``, ``"border"`` (the
            nearest border pixel) or ``"reflection"`` (points reflected back into the
            input). Default: ``"zeros"``.
        align_corners (bool, optional): -1 and 1 are the centres of the corner pixels
            (True) or their outer edges (False). None means False, with a warning.
            Default: None.

    Returns:
        Tensor: ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.

    Example::

        >>> img = eager.arange(4.0).reshape(1, 1, 2, 2)
        >>> grid = eager.tensor([[[[0.0, 0.0], [1.0, -1.0]]]])
        >>> F.grid_sample(img, grid, align_corners=True)
        tensor([[[[1.5000, 1.0000]]]])
        >>> theta = eager.tensor([[[0.5, 0.0, 0.0], [0.0, 0.5, 0.0]]])
        >>> g = F.affine_grid(theta, [1, 1, 4, 4], align_corners=False)
        >>> F.grid_sample(eager.randn(1, 1, 8, 8), g, align_corners=False).shape
        eager.Size([1, 1, 4, 4])
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check(input, grid, mode)
    n, c = input.shape[0], input.shape[1]
    spatial = tuple(input.shape[2:])
    k = len(spatial)
    out_spatial = tuple(grid.shape[1:-1])
    points = 1
    for s in out_spatial:
        points *= s
    g = reshape(grid, (n, points, k))
    # coords[d]: the (N, P) pixel coordinate along spatial dimension d (grid's last axis
    # lists x (the last dimension) first)
    coords = [_unnormalize(g.select(-1, k - 1 - d), spatial[d], align_corners)
              for d in range(k)]
    sampler = _Sampler(input, points)
    out = None
    if mode == "nearest":
        idx = [_ew.round(_pad_coordinate(x, s, padding_mode, align_corners)).detach()
               for x, s in zip(coords, spatial)]
        values, ok = sampler.at(idx)
        out = _ew.mul(values, ok)
        if grid.requires_grad:
            # the grid gets a zero gradient (not none), as from PyTorch's kernel
            link = reshape(coords[0], (n, 1, points))
            out = _ew.where(_ew.eq(ok, ok), out, link)
    elif mode == "bilinear":
        coords = [_pad_coordinate(x, s, padding_mode, align_corners)
                  for x, s in zip(coords, spatial)]
        lows = [_ew.floor(x).detach() for x in coords]
        # per dimension: (index, weight) of the lower and the upper neighbour
        sides = [((lo, _ew.sub(_ew.add(lo, 1.0), x)), (_ew.add(lo, 1.0), _ew.sub(x, lo)))
                 for x, lo in zip(coords, lows)]
        # the corners in PyTorch's order (x varies fastest), weights multiplied x first
        for corner in itertools.product((0, 1), repeat=k):
            picks = [sides[d][corner[d]] for d in range(k)]
            weight = None
            for _, w in reversed(picks):
                weight = w if weight is None else _ew.mul(weight, w)
            values, ok = sampler.at([p[0] for p in picks])
            term = _ew.mul(values, reshape(_ew.mul(weight, ok.squeeze(1)), (n, 1, points)))
            out = term if out is None else _ew.add(out, term)
    else:
        # bicubic: 4 x 4 taps around the point, each tap's index padded on its own
        x, y = coords[1], coords[0]
        x0, y0 = _ew.floor(x).detach(), _ew.floor(y).detach()
        wx = _cubic_weights(_ew.sub(x, x0))
        wy = _cubic_weights(_ew.sub(y, y0))
        for i in range(4):
            ty = _pad_coordinate(_ew.add(y0, i - 1.0), spatial[0], padding_mode,
                                 align_corners).detach()
            row = None
            for j in range(4):
                tx = _pad_coordinate(_ew.add(x0, j - 1.0), spatial[1], padding_mode,
                                     align_corners).detach()
                values, ok = sampler.at([ty, tx])
                term = _ew.mul(_ew.mul(values, ok), reshape(wx[j], (n, 1, points)))
                row = term if row is None else _ew.add(row, term)
            term = _ew.mul(row, reshape(wy[i], (n, 1, points)))
            out = term if out is None else _ew.add(out, term)
    return reshape(out, (n, c) + out_spatial)
