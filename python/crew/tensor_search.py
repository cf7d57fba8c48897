"""Paddle's counting, searching and order-statistic functions: bincount, histogram,
searchsorted, bucketize (no gradient, as Paddle's; their index work is NumPy's), and kthvalue
and mode (values and int64 indices; the values' gradient reaches the entries they were taken
from, through take_along_axis). Also Tensor methods.
"""
import numpy as np

from . import _C
from . import tensor_math as _tm
from .tensor_more import _axis, _tensor

Tensor = _C.Tensor


def _integral(a):
    return np.issubdtype(a.dtype, np.integer)


def bincount(x, weights=None, minlength=0, name=None):
    """Paddle's bincount: how often each value 0..max(x) occurs in the 1-d non-negative int x
    (at least minlength bins); with weights, the sum of the weights instead (in their dtype)."""
    a = _tensor(x, "bincount").numpy()
    if a.ndim != 1 or not _integral(a):
        raise ValueError(f"bincount: x must be a 1-d int tensor, got shape {list(x.shape)} of {x.dtype}")
    if a.size and a.min() < 0:
        raise ValueError(f"bincount: x must be non-negative, got the value {int(a.min())}")
    if int(minlength) < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if weights is None:
        return _C.to_tensor(np.bincount(a, minlength=int(minlength)).astype(np.int64))
    w = _tensor(weights, "bincount", "weights").numpy()
    if w.shape != a.shape:
        raise ValueError(f"bincount: weights of shape {list(w.shape)} must match x's {list(a.shape)}")
    return _C.to_tensor(np.bincount(a, w, int(minlength)).astype(w.dtype if w.dtype.kind == "f" else np.float64))


def histogram(input, bins=100, min=0, max=0, name=None):  # noqa: A002 (Paddle's names)
    """Paddle's histogram: int64 counts of input's entries in `bins` equal bins over [min, max]
    (input's own range when both are 0); entries outside are not counted."""
    a = _tensor(input, "histogram", "input").numpy().astype(np.float64).reshape(-1)
    if int(bins) <= 0:
        raise ValueError(f"histogram: bins must be positive, got {bins}")
    lo, hi = float(min), float(max)
    if lo == 0 and hi == 0 and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo > hi:
        raise ValueError(f"histogram: max ({max}) must be at least min ({min})")
    if lo == hi:  # one value: Paddle's widening by 1 each way
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(a, bins=int(bins), range=(lo, hi))
    return _C.to_tensor(counts.astype(np.int64))


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None):
    """Paddle's searchsorted: for each entry of values, the index where it would be inserted into
    sorted_sequence's innermost axis to keep it sorted (after equal entries with right=True).
    sorted_sequence is 1-d, or has values' leading axes."""
    seq = _tensor(sorted_sequence, "searchsorted", "sorted_sequence").numpy()
    v = _tensor(values, "searchsorted", "values").numpy()
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, v, side=side)
    else:
        if seq.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"searchsorted: sorted_sequence of shape {list(seq.shape)} and values of shape "
                             f"{list(v.shape)} must agree on all but the last axis")
        rows_s, rows_v = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        out = np.stack([np.searchsorted(s, r, side=side) for s, r in zip(rows_s, rows_v)]).reshape(v.shape)
    return _C.to_tensor(np.ascontiguousarray(out).astype(np.int32 if out_int32 else np.int64))


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None):
    """Paddle's bucketize: searchsorted(sorted_sequence, x) with a 1-d sorted_sequence."""
    if _tensor(sorted_sequence, "bucketize", "sorted_sequence").ndim != 1:
        raise ValueError(f"bucketize: sorted_sequence must be 1-d, got shape {list(sorted_sequence.shape)}")
    return searchsorted(sorted_sequence, _tensor(x, "bucketize"), out_int32, right)


def _pick(x, index, axis, keepdim):
    """x's entries at index (int64, x's shape with size 1 on axis), and index, keepdim or not."""
    idx = _C.to_tensor(np.ascontiguousarray(index))
    values = _tm.take_along_axis(x if x.ndim > 0 else _C.reshape(x, [1]), idx, axis)
    if not keepdim:
        values, idx = _C.squeeze(values, axis), _C.squeeze(idx, axis)
    return values, idx


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """Paddle's kthvalue: the k-th smallest entry (k from 1) along axis (the last by default)
    and its index."""
    _tensor(x, "kthvalue")
    axis = _axis(-1 if axis is None else axis, x.ndim, "kthvalue")
    a = x.numpy() if x.ndim > 0 else x.numpy().reshape(1)
    n = a.shape[axis]
    if not 1 <= int(k) <= n:
        raise ValueError(f"kthvalue: k must be in [1, {n}] for axis {axis} of shape {list(x.shape)}, got {k}")
    order = np.argsort(a, axis=axis, kind="stable")
    index = np.take(order, [int(k) - 1], axis=axis).astype(np.int64)
    return _pick(x, index, axis, keepdim)


def _mode_row(row):
    """The most frequent value of a 1-d array (the smallest on a tie) and its last index."""
    values, counts = np.unique(row, return_counts=True)
    best = values[np.argmax(counts)]
    return np.flatnonzero(row == best)[-1]


def mode(x, axis=-1, keepdim=False, name=None):
    """Paddle's mode: the most frequent entry along axis (the smallest on a tie) and the index
    of its last occurrence."""
    _tensor(x, "mode")
    axis = _axis(axis, x.ndim, "mode")
    a = x.numpy() if x.ndim > 0 else x.numpy().reshape(1)
    moved = np.moveaxis(a, axis, -1)
    index = np.array([_mode_row(r) for r in moved.reshape(-1, moved.shape[-1])], dtype=np.int64)
    index = np.moveaxis(index.reshape(moved.shape[:-1] + (1,)), -1, axis)
    return _pick(x, index, axis, keepdim)


NAMES = ["bincount", "histogram", "searchsorted", "bucketize", "kthvalue", "mode"]
METHODS = ["bincount", "histogram", "bucketize", "kthvalue", "mode"]
__all__ = list(NAMES)


def install():
    for name in METHODS:
        setattr(Tensor, name, globals()[name])


install()
