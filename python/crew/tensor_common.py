"""Paddle's everyday tensor functions that a new user reaches for next: lerp, masked_fill,
moveaxis, count_nonzero, nansum, nanmean, atan2 and scatter_nd_add (also as Tensor methods).

Each composes crew's differentiable ops (where, transpose, sum, ...), so gradients flow as in
Paddle: lerp to x, y and a tensor weight; masked_fill to x where the mask is false; nansum and
nanmean to the entries that are not NaN.
"""
import builtins

import numpy as np

from . import _C
from . import tensor_math as _tm
from .default_dtype import FLOATING
from .tensor_more import _tensor

Tensor = _C.Tensor


def _axes(axis, ndim, op):
    """axis (None, an int or a list) as a sorted list of non-negative axes."""
    if axis is None:
        return list(range(ndim))
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in items:
        a = int(a)
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise ValueError(f"{op}: axis {a} is out of range for a tensor of {ndim} dimensions")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: axis {list(items)} names an axis twice")
    return sorted(out)


def _is_floating(x):
    return x.dtype in FLOATING


def _reduce_sum(x, axis, keepdim, op):
    axes = _axes(axis, x.ndim, op)
    return _C.sum(x, axes, bool(keepdim)) if axes else x


def lerp(x, y, weight, name=None):
    """Paddle's lerp: x + weight * (y - x), broadcast; weight a float or a tensor."""
    _tensor(x, "lerp")
    _tensor(y, "lerp", "y")
    w = weight if isinstance(weight, Tensor) else _C.full([1], float(weight), x.dtype)
    return x + w * (y - x)


def masked_fill(x, mask, value, name=None):
    """Paddle's masked_fill: x with the entries where mask (bool, broadcast to x) is true set to
    value (a number or a 0-d/1-element tensor). The gradient reaches x where mask is false."""
    _tensor(x, "masked_fill")
    _tensor(mask, "masked_fill", "mask")
    if mask.dtype != _C.dtype.bool:
        raise TypeError(f"masked_fill(): mask must be a bool tensor, got {mask.dtype}")
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"masked_fill: value must hold one element, got shape {list(value.shape)}")
        fill = _C.cast(value.reshape([1]), x.dtype) if value.dtype != x.dtype else value.reshape([1])
    else:
        fill = _C.full([1], float(value), x.dtype)
    out = _tm.where(mask, fill, x)
    if list(out.shape) != list(x.shape):
        raise ValueError(f"masked_fill: mask of shape {list(mask.shape)} does not broadcast to x's "
                         f"shape {list(x.shape)}")
    return out


def moveaxis(x, source, destination, name=None):
    """Paddle's moveaxis: the axes in source moved to the places in destination, the others
    kept in their order."""
    _tensor(x, "moveaxis")
    src = list(source) if isinstance(source, (list, tuple)) else [source]
    dst = list(destination) if isinstance(destination, (list, tuple)) else [destination]
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {src} and destination {dst} must have the same length")
    nd = x.ndim
    src = [_axes(a, nd, "moveaxis")[0] for a in src]
    dst = [_axes(a, nd, "moveaxis")[0] for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: repeated axis in source {source} or destination {destination}")
    rest = [a for a in range(nd) if a not in src]
    perm = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return _C.transpose(x, perm)


def count_nonzero(x, axis=None, keepdim=False, name=None):
    """Paddle's count_nonzero: how many entries are not zero, over axis (all by default), as
    int64."""
    _tensor(x, "count_nonzero")
    # Counted in float64 (exact to 2^53 entries): crew's sum reduces floating tensors.
    nonzero = _C.cast(_tm.not_equal(x, _C.full([1], 0.0, x.dtype)), "float64")
    return _C.cast(_reduce_sum(nonzero, axis, keepdim, "count_nonzero"), "int64")


def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    """Paddle's nansum: the sum over axis with NaN entries counted as zero."""
    _tensor(x, "nansum")
    clean = _tm.where(_tm.isnan(x), _C.full([1], 0.0, x.dtype), x) if _is_floating(x) else x
    out = _reduce_sum(clean, axis, keepdim, "nansum")
    return _C.cast(out, dtype) if dtype is not None else out


def nanmean(x, axis=None, keepdim=False, name=None):
    """Paddle's nanmean: the mean over axis of the entries that are not NaN (NaN where all are)."""
    _tensor(x, "nanmean")
    if not _is_floating(x):
        raise TypeError(f"nanmean(): x must be a floating tensor, got {x.dtype}")
    count = _reduce_sum(_C.cast(_tm.logical_not(_tm.isnan(x)), x.dtype), axis, keepdim, "nanmean")
    return nansum(x, axis, None, keepdim) / count


def atan2(x, y, name=None):
    """Paddle's atan2: the angle of the point (y, x), i.e. arctan(x / y) in the right quadrant,
    in (-pi, pi], broadcast; int inputs give float64. The gradient is y / (x^2 + y^2) for x and
    -x / (x^2 + y^2) for y (0 at the origin, where the angle is 0)."""
    _tensor(x, "atan2")
    _tensor(y, "atan2", "y")
    if x.dtype != y.dtype:
        raise TypeError(f"atan2(): x and y must have one dtype, got {x.dtype} and {y.dtype}")
    if not _is_floating(x):
        x, y = _C.cast(x, "float64"), _C.cast(y, "float64")

    def const(v):
        return _C.full([1], float(v), x.dtype)

    zero, one = const(0), const(1)
    # Each branch divides by the larger of |x|, |y| (or 1 where that is 0), so neither the
    # value nor the gradient of the branch not taken is ever inf or NaN.
    y_wide = _tm.greater_equal(_tm.abs(y), _tm.abs(x))
    y_safe = _tm.where(_tm.equal(y, zero), one, y)
    x_safe = _tm.where(_tm.equal(x, zero), one, x)
    turn = _tm.where(_tm.less_than(y, zero), _tm.where(_tm.less_than(x, zero), const(-_PI), const(_PI)), zero)
    origin = _tm.logical_and(_tm.equal(x, zero), _tm.equal(y, zero))
    from_y = _C.atan(_tm.where(origin, zero, x) / y_safe) + turn
    from_x = _tm.sign(x) * (_PI / 2) - _C.atan(y / x_safe)
    return _tm.where(y_wide, from_y, from_x)


_PI = 3.141592653589793


def scatter_nd_add(x, index, updates, name=None):
    """Paddle's scatter_nd_add: x with updates added at the positions index names (index
    [..., k] addresses x's first k axes; repeated positions accumulate). The gradient reaches x
    whole and each update from its position."""
    _tensor(x, "scatter_nd_add")
    _tensor(index, "scatter_nd_add", "index")
    _tensor(updates, "scatter_nd_add", "updates")
    idx = index.numpy().astype(np.int64)
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim == 0 or not 1 <= k <= x.ndim:
        raise ValueError(f"scatter_nd_add: index of shape {list(index.shape)} must end in k, 1 <= k <= "
                         f"{x.ndim} (x's rank)")
    lead, rest = list(x.shape[:k]), list(x.shape[k:])
    want = list(idx.shape[:-1]) + rest
    if list(updates.shape) != want:
        raise ValueError(f"scatter_nd_add: updates of shape {list(updates.shape)} must be index.shape[:-1] + "
                         f"x.shape[k:] = {want}")
    flat_idx = idx.reshape(-1, k)
    bad = (flat_idx < 0) | (flat_idx >= np.array(lead))
    if bad.any():
        row = flat_idx[np.argmax(bad.any(axis=1))]
        raise IndexError(f"scatter_nd_add: index {row.tolist()} is out of range for x's leading shape {lead}")
    rows = int(np.prod(lead))
    linear = np.ravel_multi_index(tuple(flat_idx.T), lead) if flat_idx.size else np.zeros([0], np.int64)
    added = _C.scatter(_C.full([rows] + rest, 0.0, x.dtype), _C.to_tensor(np.ascontiguousarray(linear)),
                       updates.reshape([-1] + rest), False)
    return x + added.reshape(list(x.shape))

NAMES = ["lerp", "masked_fill", "moveaxis", "count_nonzero", "nansum", "nanmean", "atan2", "scatter_nd_add"]
__all__ = list(NAMES)


def install():
    for name in NAMES:
        setattr(Tensor, name, globals()[name])


install()
