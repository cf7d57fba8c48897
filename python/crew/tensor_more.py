"""Paddle 2.4's everyday tensor functions beyond tensor_math / tensor_arith (issue 30): t, neg,
reciprocal, clone, assign, logsumexp, tril, triu, diag, trace, outer, kron, meshgrid, diff,
cross, dist, strided_slice, repeat_interleave, unique, nonzero, shape, increment, is_tensor,
in_dynamic_mode, and the Tensor methods t and gradient.

Each differentiable one composes crew's differentiable C++ ops (where, expand, slice,
index_select, sum, ...), so gradients flow where Paddle has them. unique and nonzero have no
gradient in Paddle; their index work is NumPy's.
"""
import builtins

import numpy as np

from . import _C
from . import tensor_math as _tm

Tensor = _C.Tensor


def _tensor(x, op, arg="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a crew.Tensor, got {type(x).__name__}")
    return x


def _axis(axis, ndim, op):
    a = int(axis)
    if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
        raise ValueError(f"{op}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return a % builtins.max(ndim, 1)


def _ramp(n):
    return _C._ramp(0.0, 1.0, int(n), "float64")


def t(input, name=None):  # noqa: A002 (Paddle's name)
    """Paddle's t: a 0-d, 1-d tensor as it is, a 2-d one transposed; ValueError above 2-d."""
    _tensor(input, "t", "input")
    if input.ndim > 2:
        raise ValueError(f"t: input must be at most 2-d, got shape {list(input.shape)} (use transpose)")
    return _C.transpose(input, [1, 0]) if input.ndim == 2 else input


def neg(x, name=None):
    """Paddle's neg: -x, element-wise, with a gradient."""
    return _tensor(x, "neg") * -1


def reciprocal(x, name=None):
    """Paddle's reciprocal: 1 / x, element-wise, with a gradient."""
    _tensor(x, "reciprocal")
    return _C.divide(_C.full([1], 1.0, x.dtype), x)


_detached_copy = Tensor.clone  # the C++ method: a copy outside the graph


def clone(x, name=None):
    """Paddle's clone (also Tensor.clone): a copy of x that stays in the graph (the gradient
    flows back to x); a copy of a tensor outside the graph is outside it too."""
    if _tensor(x, "clone").stop_gradient:
        return _detached_copy(x)
    return x + _C.full([1], 0.0, x.dtype)  # a new tensor whose gradient is the identity


def assign(x, output=None):
    """Paddle's assign: x (a Tensor, NumPy array, list or number) copied; a Tensor's copy keeps
    its gradient. With output, the values are written into output, which is returned."""
    value = clone(x) if isinstance(x, Tensor) else _tm._to_shape1(_C.to_tensor(np.asarray(x)))
    if not isinstance(x, Tensor) and value.dtype == _C.dtype.float64 and not isinstance(x, np.ndarray):
        value = _C.cast(value, "float32")
    if output is None:
        return value
    _tensor(output, "assign", "output").set_value(value.numpy())
    return output


def is_tensor(x):
    """Paddle's is_tensor: whether x is a crew.Tensor."""
    return isinstance(x, Tensor)


def in_dynamic_mode():
    """Paddle's in_dynamic_mode: always True, crew runs eagerly (it has no static graphs)."""
    return True


def shape(input):  # noqa: A002
    """Paddle's shape(input): input's shape as a 1-d int32 tensor."""
    dims = list(_tensor(input, "shape", "input").shape)
    return _C.to_tensor(np.asarray(dims, dtype=np.int32))


def increment(x, value=1.0, name=None):
    """Paddle's increment: adds value to the one element of x in place and returns x."""
    if _tensor(x, "increment").size != 1:
        raise ValueError(f"increment: x must hold exactly one element, got shape {list(x.shape)}")
    x._assign_(x + _tm._like(value, x))
    return x


def logsumexp(x, axis=None, keepdim=False, name=None):
    """Paddle's logsumexp: log(sum(exp(x))) over axis (None: every axis, shape [1]), computed
    stably (the maximum taken out); its gradient is softmax(x)."""
    axes = _tm._axes(axis)
    _tensor(x, "logsumexp")
    zero = _C.full([1], 0.0, x.dtype)
    m = _C.amax(x, axes, True).detach()
    m = _C.where(_C.isinf(m), zero, m)
    out = _C.log(_C.sum(_C.exp(x - m), axes or list(range(x.ndim)), bool(keepdim)))
    return _tm._to_shape1(out + (m if keepdim else _C.reshape(m, list(out.shape))))


def _band(x, diagonal, op, keep):
    _tensor(x, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: x must be at least 2-d, got shape {list(x.shape)}")
    rows, cols = x.shape[-2], x.shape[-1]
    offset = _C.reshape(_ramp(cols), [1, cols]) - _C.reshape(_ramp(rows), [rows, 1])
    mask = keep(offset, _C.full([1], float(int(diagonal)), "float64"))
    return _C.where(mask, x, _C.full([1], 0.0, x.dtype))


def tril(x, diagonal=0, name=None):
    """Paddle's tril: the lower triangle of the last two axes (column - row <= diagonal), the
    rest zero; the gradient flows to the kept entries."""
    return _band(x, diagonal, "tril", _C.less_equal)


def triu(x, diagonal=0, name=None):
    """Paddle's triu: the upper triangle of the last two axes (column - row >= diagonal)."""
    return _band(x, diagonal, "triu", _C.greater_equal)


def _diagonal(x, offset, axis1, axis2, op):
    """The entries x[..., i, i + offset] of axes axis1, axis2, moved to the last axis."""
    a1, a2 = _axis(axis1, x.ndim, op), _axis(axis2, x.ndim, op)
    if a1 == a2:
        raise ValueError(f"{op}: axis1 and axis2 must differ, got {axis1} and {axis2}")
    rest = [a for a in range(x.ndim) if a not in (a1, a2)]
    m = _C.transpose(x, rest + [a1, a2])
    rows, cols = m.shape[-2], m.shape[-1]
    n = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else builtins.min(rows + offset, cols))
    r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
    flat = _C.reshape(m, list(m.shape[:-2]) + [rows * cols])
    index = _C.to_tensor(np.asarray([(r0 + i) * cols + c0 + i for i in range(n)], dtype=np.int64))
    return _C.index_select(flat, index, flat.ndim - 1)


def diag(x, offset=0, padding_value=0, name=None):
    """Paddle's diag: a 1-d x becomes a square matrix with x on diagonal offset (padding_value
    elsewhere); a 2-d x gives its diagonal offset as a 1-d tensor. With a gradient."""
    _tensor(x, "diag")
    offset = int(offset)
    if x.ndim == 2:
        return _diagonal(x, offset, 0, 1, "diag")
    if x.ndim != 1:
        raise ValueError(f"diag: x must be 1-d or 2-d, got shape {list(x.shape)}")
    n = x.shape[0] + builtins.abs(offset)
    r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
    rows, cols = _C.reshape(_ramp(n), [n, 1]), _C.reshape(_ramp(n), [1, n])
    on = _C.logical_and(_C.equal(cols - rows, _C.full([1], float(offset), "float64")),
                        _C.less_than(rows, _C.full([1], float(r0 + x.shape[0]), "float64")))
    on = _C.logical_and(on, _C.greater_equal(rows, _C.full([1], float(r0), "float64")))
    # entry (r, c) on the diagonal holds x[r - r0]; the column index picks it as well: c - c0
    pick = _C.clip(cols - c0, 0.0, float(builtins.max(x.shape[0] - 1, 0)))
    spread = _C.index_select(x, _C.cast(_C.reshape(pick, [-1]), "int64"), 0)
    spread = _C.expand(_C.reshape(spread, [1, n]), [n, n])
    return _C.where(on, spread, _C.full([1], float(padding_value), x.dtype))


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    """Paddle's trace: the sum of the diagonal offset of axes axis1, axis2 (a 2-d x gives shape
    [1]); with a gradient."""
    _tensor(x, "trace")
    if x.ndim < 2:
        raise ValueError(f"trace: x must be at least 2-d, got shape {list(x.shape)}")
    d = _diagonal(x, int(offset), axis1, axis2, "trace")
    if d.shape[-1] == 0:
        return _tm._to_shape1(_C.full(list(d.shape[:-1]), 0.0, x.dtype))
    return _tm._to_shape1(_C.sum(d, -1, False))


def outer(x, y, name=None):
    """Paddle's outer: the outer product of x and y flattened, shape [x.size, y.size]."""
    _tensor(x, "outer")
    _tensor(y, "outer", "y")
    return _C.reshape(x, [-1, 1]) * _C.reshape(y, [1, -1])


def kron(x, y, name=None):
    """Paddle's kron: the Kronecker product (the lower-rank operand gets leading 1 axes)."""
    _tensor(x, "kron")
    _tensor(y, "kron", "y")
    nd = builtins.max(x.ndim, y.ndim)
    xs = [1] * (nd - x.ndim) + list(x.shape)
    ys = [1] * (nd - y.ndim) + list(y.shape)
    xe = _C.reshape(x, [d for a in xs for d in (a, 1)])
    ye = _C.reshape(y, [d for b in ys for d in (1, b)])
    return _C.reshape(xe * ye, [a * b for a, b in zip(xs, ys)])


def meshgrid(*args, **kwargs):
    """Paddle's meshgrid: 1-d tensors (as arguments or one list) expanded to a grid ('ij'
    indexing), a list of tensors; with gradients."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    for i, v in enumerate(tensors):
        if _tensor(v, "meshgrid", f"args[{i}]").ndim != 1:
            raise ValueError(f"meshgrid: every input must be 1-d, input {i} has shape {list(v.shape)}")
    dims = [v.shape[0] for v in tensors]
    out = []
    for i, v in enumerate(tensors):
        view = [1] * len(dims)
        view[i] = dims[i]
        out.append(_C.expand(_C.reshape(v, view), dims))
    return out


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None):
    """Paddle's diff: the n-th forward difference along axis, prepend/append joined first; a
    bool x gives logical_xor of neighbours. With a gradient."""
    _tensor(x, "diff")
    a = _axis(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    out = _C.concat(parts, a) if len(parts) > 1 else x
    for _ in range(int(n)):
        length = out.shape[a]
        hi = _C.slice(out, [a], [1], [length])
        lo = _C.slice(out, [a], [0], [builtins.max(length - 1, 0)])
        out = _C.logical_xor(hi, lo) if out.dtype == _C.dtype.bool else hi - lo
    return out


def cross(x, y, axis=9, name=None):
    """Paddle's cross: the cross product of 3-vectors along axis (9, Paddle's default: the
    first axis of length 3); x and y of one shape. With gradients."""
    _tensor(x, "cross")
    _tensor(y, "cross", "y")
    if list(x.shape) != list(y.shape):
        raise ValueError(f"cross: x and y must have one shape, got {list(x.shape)} and {list(y.shape)}")
    if axis is None or axis == 9:
        threes = [i for i, d in enumerate(x.shape) if d == 3]
        if not threes:
            raise ValueError(f"cross: no axis of length 3 in shape {list(x.shape)}")
        a = threes[0]
    else:
        a = _axis(axis, x.ndim, "cross")
        if x.shape[a] != 3:
            raise ValueError(f"cross: axis {axis} has length {x.shape[a]}, must be 3")
    xs, ys = _C.split(x, 3, a), _C.split(y, 3, a)
    parts = [xs[(i + 1) % 3] * ys[(i + 2) % 3] - xs[(i + 2) % 3] * ys[(i + 1) % 3] for i in range(3)]
    return _C.concat(parts, a)


def dist(x, y, p=2, name=None):
    """Paddle's dist: the p-norm of x - y (broadcast) over every element, shape [1]; p 0 counts
    the nonzero entries, inf / -inf take the largest / smallest |x - y|. With gradients."""
    z = _tensor(x, "dist") - _tensor(y, "dist", "y")
    p = float(p)
    flat = _C.reshape(z, [-1])
    if p == 0:
        nonzero = _C.cast(_C.not_equal(flat, _C.full([1], 0.0, z.dtype)), z.dtype)
        return _C.reshape(_C.sum(nonzero, [], False), [1])
    if p == float("inf"):
        return _C.reshape(_C.amax(_C.abs(flat), [], False), [1])
    if p == float("-inf"):
        return _C.reshape(_C.amin(_C.abs(flat), [], False), [1])
    return _tm._to_shape1(_C.norm(flat, p, [], False))


def strided_slice(x, axes, starts, ends, strides, name=None):
    """Paddle's strided_slice: x[start:end:stride] on each of axes (ends clamp as Python's
    slices, negative strides count down). With a gradient."""
    _tensor(x, "strided_slice")
    vals = [_tm._axes(v) for v in (axes, starts, ends, strides)]
    if len({len(v) for v in vals}) != 1:
        raise ValueError("strided_slice: axes, starts, ends and strides must have one length")
    key = [builtins.slice(None)] * x.ndim
    for a, s, e, st in zip(*vals):
        if st == 0:
            raise ValueError("strided_slice: a stride must not be 0")
        key[_axis(a, x.ndim, "strided_slice")] = builtins.slice(s, e, st)
    return x[tuple(key)]


def repeat_interleave(x, repeats, axis=None, name=None):
    """Paddle's repeat_interleave: each element (axis None: of the flattened x) or each slice
    along axis repeated repeats times (an int, or a 1-d tensor of one count per slice). With a
    gradient."""
    _tensor(x, "repeat_interleave")
    if axis is None:
        x, a = _C.reshape(x, [-1]), 0
    else:
        a = _axis(axis, x.ndim, "repeat_interleave")
    n = x.shape[a]
    counts = repeats.numpy().reshape(-1) if isinstance(repeats, Tensor) else np.asarray([int(repeats)])
    if counts.size == 1:
        counts = np.repeat(counts, n)
    if counts.size != n or (counts < 0).any():
        raise ValueError(f"repeat_interleave: repeats must be one count >= 0 or {n} of them, got {counts.tolist()}")
    index = np.repeat(np.arange(n, dtype=np.int64), counts.astype(np.int64))
    return _C.index_select(x, _C.to_tensor(index), a)


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    """Paddle's unique: the sorted distinct values (axis None: of the flattened x; else the
    distinct slices along axis), and as asked the index of each one's first occurrence, the
    inverse (x's entries as indices into the result) and the counts, in dtype. No gradient."""
    a = _tensor(x, "unique").numpy()
    if axis is not None:
        axis = _axis(axis, a.ndim, "unique")
    out, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                            return_counts=True, axis=axis)
    result = [_C.to_tensor(out, dtype=x.dtype)]
    for wanted, v in ((return_index, index), (return_inverse, inverse), (return_counts, counts)):
        if wanted:
            result.append(_C.to_tensor(np.asarray(v).reshape(-1), dtype=dtype))
    return result[0] if len(result) == 1 else tuple(result)


def nonzero(x, as_tuple=False):
    """Paddle's nonzero: the indices of x's nonzero entries, an int64 tensor [z, ndim]; with
    as_tuple, one [z, 1] tensor per axis."""
    idx = np.argwhere(_tensor(x, "nonzero").numpy()).astype(np.int64)
    if as_tuple:
        return tuple(_C.to_tensor(np.ascontiguousarray(idx[:, i:i + 1])) for i in range(idx.shape[1]))
    return _C.to_tensor(idx.reshape(-1, builtins.max(x.ndim, 1)))


def bernoulli(x, name=None):
    """Paddle's bernoulli: 1 with probability x, else 0, element-wise, in x's dtype (drawn from
    crew's generator, which paddle.seed seeds). No gradient."""
    _tensor(x, "bernoulli")
    u = _C.uniform(list(x.shape), 0.0, 1.0, x.dtype)
    return _C.cast(_C.less_than(u, x.detach()), x.dtype)


def multinomial(x, num_samples=1, replacement=False, name=None):
    """Paddle's multinomial: num_samples category indices (int64) drawn from the weights of the
    last axis of a 1-d or 2-d x (not necessarily normalised); without replacement, distinct
    indices (Gumbel top-k, the law of drawing one at a time). No gradient."""
    _tensor(x, "multinomial")
    if x.ndim not in (1, 2):
        raise ValueError(f"multinomial: x must be 1-d or 2-d, got shape {list(x.shape)}")
    k, n = int(num_samples), x.shape[-1]
    p = _C.cast(x.detach(), "float64")
    if _C._any(_C.less_than(p, _C.full([1], 0.0, "float64"))):
        raise ValueError("multinomial: x holds a negative weight")
    if not replacement and k > n:
        raise ValueError(f"multinomial: num_samples ({k}) exceeds the {n} categories without replacement")
    rows = p if x.ndim == 2 else _C.reshape(p, [1, n])
    if replacement:
        cdf = _C.cumsum(rows, 1) / _C.sum(rows, 1, True)
        u = _C.uniform([rows.shape[0], k, 1], 0.0, 1.0, "float64")
        below = _C.cast(_C.less_than(_C.unsqueeze(cdf, 1), u), "float64")
        out = _C.clip(_C.sum(below, 2, False), 0.0, float(n - 1))
    else:
        u = _C.uniform(list(rows.shape), 1e-300, 1.0, "float64")
        keys = _C.log(rows) - _C.log(-_C.log(u))
        out = _C.topk(keys, k, 1, True)[1]
    out = _C.cast(out, "int64")
    return out if x.ndim == 2 else _C.reshape(out, [k])


def _put_positions(arr, indices, a):
    """Flat positions in arr of put_along_axis's indices (broadcast to arr's shape but along a)."""
    idx = indices.numpy() if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices must have arr's {arr.ndim} dimensions, got shape {list(idx.shape)}")
    shape = list(arr.shape)
    shape[a] = idx.shape[a]
    try:
        idx = np.broadcast_to(idx, shape).astype(np.int64)
    except ValueError:
        raise ValueError(f"put_along_axis: indices of shape {list(idx.shape)} do not broadcast "
                         f"against arr of shape {list(arr.shape)} off axis {a}") from None
    n = arr.shape[a]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"put_along_axis: an index is outside [0, {n}) (got {idx.min()} .. {idx.max()})")
    coords = list(np.indices(shape, dtype=np.int64))
    coords[a] = idx
    return shape, np.ravel_multi_index(coords, arr.shape).reshape(-1)


def put_along_axis(arr, indices, values, axis, reduce="assign"):
    """Paddle's put_along_axis: arr with values (broadcast to indices' shape) put at indices
    along axis; reduce 'assign' replaces, 'add' adds, 'mul'/'multiply' multiplies (repeated
    positions accumulate). Gradients flow to arr and values."""
    _tensor(arr, "put_along_axis", "arr")
    if reduce not in ("assign", "add", "mul", "multiply"):
        raise ValueError(f"put_along_axis: reduce must be 'assign', 'add', 'mul' or 'multiply', got {reduce!r}")
    shape, pos = _put_positions(arr, indices, _axis(axis, arr.ndim, "put_along_axis"))
    values = _tm._like(values, arr)
    if values.dtype != arr.dtype:
        values = _C.cast(values, arr.dtype)
    vals = _C.reshape(_C.expand(values, shape), [-1])
    flat = _C.reshape(arr, [-1])
    if reduce == "assign":
        out = _C.scatter(flat, _C.to_tensor(pos), vals, True)
    elif reduce == "add":
        out = flat + _C.scatter(_C.full(list(flat.shape), 0.0, arr.dtype), _C.to_tensor(pos), vals, False)
    else:  # one round per repetition, so that every round's positions are distinct
        order = np.argsort(pos, kind="stable")
        rank = np.empty_like(pos)
        starts = np.r_[0, np.flatnonzero(np.diff(pos[order])) + 1]
        rank[order] = np.arange(pos.size) - np.repeat(starts, np.diff(np.r_[starts, pos.size]))
        out = flat
        for r in range(int(rank.max()) + 1 if pos.size else 0):
            sel = np.flatnonzero(rank == r)
            factor = _C.scatter(_C.full(list(flat.shape), 1.0, arr.dtype), _C.to_tensor(pos[sel]),
                                _C.index_select(vals, _C.to_tensor(sel), 0), True)
            out = out * factor
    return _C.reshape(out, list(arr.shape))


def disable_static(place=None):
    """Paddle's disable_static: crew always runs eagerly, so this only selects place ('cpu',
    'gpu:0', a CPUPlace or CUDAPlace) when given."""
    if place is None:
        return
    if isinstance(place, _C.Place):
        place = "cpu" if place.is_cpu_place() else f"gpu:{place.gpu_device_id()}"
    _C.set_device(place)


def _get_persistable(self):
    """Paddle's Tensor.persistable: True for a layer's parameters and persistable buffers
    (what state_dict saves), False for other tensors; settable."""
    return self.__dict__.get("_persistable", False)


def _set_persistable(self, value):
    self.__dict__["_persistable"] = bool(value)


def _gradient(self):
    """Paddle's Tensor.gradient(): the gradient as a NumPy array, None before backward."""
    g = self.grad
    return None if g is None else g.numpy()


NAMES = ["t", "neg", "reciprocal", "clone", "assign", "is_tensor", "in_dynamic_mode", "shape", "increment",
         "logsumexp", "tril", "triu", "diag", "trace", "outer", "kron", "meshgrid", "diff", "cross", "dist",
         "strided_slice", "repeat_interleave", "unique", "nonzero", "bernoulli", "multinomial",
         "put_along_axis", "disable_static"]
METHODS = ["t", "neg", "reciprocal", "logsumexp", "tril", "triu", "diag", "trace", "outer", "kron", "diff",
           "cross", "dist", "strided_slice", "repeat_interleave", "unique", "nonzero", "increment", "put_along_axis"]
__all__ = list(NAMES)


def install():
    for name in METHODS:
        setattr(Tensor, name, globals()[name])
    Tensor.clone = clone
    Tensor.gradient = _gradient
    Tensor.persistable = property(_get_persistable, _set_persistable)


install()
