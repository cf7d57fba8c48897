"""Paddle 2.4's tensor creation, math, masks and in-place methods over crew._C (issue 30).

The computing is C++ (crew/autograd/ops_math.h, kernels under crew/tensor/kernels); this
module maps Paddle's argument spellings and defaults onto it: shapes as lists, tuples or
tensors, dtype names, axis None/int/list, scalars where Paddle takes them, reductions to
shape [1] (Paddle 2.4 has no 0-d tensors), and Tensor methods of the same names.
"""
import builtins
import math as _math

import numpy as np

from . import _C
from .default_dtype import default_float

Tensor = _C.Tensor
_FLOATS = (_C.dtype.float32, _C.dtype.float64)


def _dtype(dtype, default="float32"):
    return _C.dtype.float32 if dtype is None and default == "float32" else (default if dtype is None else dtype)


def _random_dtype(dtype):
    """rand, randn, uniform and normal follow set_default_dtype, as Paddle 2.4's."""
    return default_float() if dtype is None else dtype


def _shape(shape, op="shape"):
    """A shape as a list of ints: list, tuple, int or 1-d int tensor (entries may be tensors)."""
    if isinstance(shape, Tensor):
        return [int(v) for v in shape.numpy().reshape(-1)]
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op}(): argument 'shape' must be a list, tuple or Tensor, got {type(shape).__name__}")
    return [int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape]


def _axes(axis):
    """Paddle's axis (None, int, list/tuple, 1-d tensor) as crew's list (empty: every axis)."""
    if axis is None:
        return []
    if isinstance(axis, Tensor):
        return [int(v) for v in axis.numpy().reshape(-1)]
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return [int(axis)]


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


def _like(value, x):
    """A Python number as a [1] tensor of x's dtype (float32 for a float beside an integer x)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float, builtins.bool, np.number)):
        keep = x.dtype in _FLOATS or not isinstance(value, (float, np.floating))
        return _C.full([1], float(value), x.dtype if keep else _C.dtype.float32)
    return _C.to_tensor(value)


def _to_shape1(t):
    """Paddle 2.4 reduces to shape [1], never to a 0-d tensor."""
    return _C.reshape(t, [1]) if t.ndim == 0 else t


# ---- creation ----
def zeros(shape, dtype=None, name=None):
    return _C.full(_shape(shape), 0.0, _dtype(dtype))


def ones(shape, dtype=None, name=None):
    return _C.full(_shape(shape), 1.0, _dtype(dtype))


def full(shape, fill_value, dtype=None, name=None):
    return _C.full(_shape(shape), float(_scalar(fill_value)), _dtype(dtype))


def zeros_like(x, dtype=None, name=None):
    return _C.full(list(x.shape), 0.0, x.dtype if dtype is None else dtype)


def ones_like(x, dtype=None, name=None):
    return _C.full(list(x.shape), 1.0, x.dtype if dtype is None else dtype)


def full_like(x, fill_value, dtype=None, name=None):
    return _C.full(list(x.shape), float(_scalar(fill_value)), x.dtype if dtype is None else dtype)


def arange(start=0, end=None, step=1, dtype=None, name=None):
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        ints = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = "int64" if ints else "float32"
    n = builtins.max(0, _math.ceil((end - start) / step))
    return _C._ramp(float(start), float(step), int(n), dtype)


def linspace(start, stop, num, dtype=None, name=None):
    start, stop, num = float(_scalar(start)), float(_scalar(stop)), int(_scalar(num))
    if num < 1:
        raise ValueError(f"linspace: num must be >= 1, got {num}")
    step = (stop - start) / (num - 1) if num > 1 else 0.0
    return _C._ramp(start, step, num, _dtype(dtype))


def eye(num_rows, num_columns=None, dtype=None, name=None):
    cols = num_rows if num_columns is None else num_columns
    rows = _C.reshape(_C._ramp(0.0, 1.0, int(num_rows), "int64"), [int(num_rows), 1])
    diag = _C.equal(rows, _C._ramp(0.0, 1.0, int(cols), "int64"))
    return _C.cast(diag, _dtype(dtype))


def rand(shape, dtype=None, name=None):
    return _C.uniform(_shape(shape), 0.0, 1.0, _random_dtype(dtype))


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None):  # noqa: A002 (Paddle's names)
    return _C.uniform(_shape(shape), float(_scalar(min)), float(_scalar(max)), _random_dtype(dtype))


def randn(shape, dtype=None, name=None):
    return _C.normal(_shape(shape), 0.0, 1.0, _random_dtype(dtype))


standard_normal = randn


def normal(mean=0.0, std=1.0, shape=None, name=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        noise = _C.normal(list(like.shape), 0.0, 1.0, like.dtype)
        return noise * std + mean
    return _C.normal(_shape([1] if shape is None else shape), float(mean), float(std), _random_dtype(None))


def randint(low=0, high=None, shape=[1], dtype=None, name=None):  # noqa: B006 (Paddle's default)
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    u = _C.uniform(_shape(shape), float(low), float(high), "float64")
    return _C.cast(_C.clip(_C.floor(u), float(low), float(high - 1)), "int64" if dtype is None else dtype)


def randperm(n, dtype="int64", name=None):
    return _C.cast(argsort(rand([int(n)])), dtype)


# ---- math ----
def _unary(fn):
    def op(x, name=None):
        return fn(x)
    op.__name__ = fn.__name__
    op.__doc__ = f"Paddle's {fn.__name__}(x): element-wise, with a gradient (crew._C.{fn.__name__})."
    return op


abs = _unary(_C.abs)  # noqa: A001
sqrt = _unary(_C.sqrt)
rsqrt = _unary(_C.rsqrt)
square = _unary(_C.square)
sin = _unary(_C.sin)
cos = _unary(_C.cos)
tanh = _unary(_C.tanh)
sigmoid = _unary(_C.sigmoid)
erf = _unary(_C.erf)
sign = _unary(_C.sign)
floor = _unary(_C.floor)
ceil = _unary(_C.ceil)
round = _unary(_C.round)  # noqa: A001 (half away from zero, as Paddle)
tan = _unary(_C.tan)
log2 = _unary(_C.log2)
log10 = _unary(_C.log10)
log1p = _unary(_C.log1p)
expm1 = _unary(_C.expm1)
trunc = _unary(_C.trunc)
asin = _unary(_C.asin)
acos = _unary(_C.acos)
atan = _unary(_C.atan)
sinh = _unary(_C.sinh)
cosh = _unary(_C.cosh)
asinh = _unary(_C.asinh)
acosh = _unary(_C.acosh)
atanh = _unary(_C.atanh)


def clip(x, min=None, max=None, name=None):  # noqa: A002
    lo = -_math.inf if min is None else float(_scalar(min))
    hi = _math.inf if max is None else float(_scalar(max))
    if x.dtype not in _FLOATS:
        lo, hi = builtins.max(lo, -2.0 ** 62), builtins.min(hi, 2.0 ** 62)
    return _C.clip(x, lo, hi)


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    s, b = float(_scalar(scale)), float(_scalar(bias))
    return x * s + b if bias_after_scale else (x + b) * s


def cast(x, dtype):
    return _C.cast(x, dtype)


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        raise ValueError("where: crew needs x and y (where(condition) alone is nonzero(condition))")
    x = _like(x, y) if not isinstance(x, Tensor) else x
    y = _like(y, x) if not isinstance(y, Tensor) else y
    return _C.where(condition, x, y)


def topk(x, k, axis=None, largest=True, sorted=True, name=None):  # noqa: A002
    return tuple(_C.topk(x, int(_scalar(k)), -1 if axis is None else int(axis), bool(largest)))


def sort(x, axis=-1, descending=False, name=None):
    return _C.sort(x, int(axis), bool(descending))[0]


def argsort(x, axis=-1, descending=False, name=None):
    return _C.sort(x, int(axis), bool(descending))[1]


def gather(x, index, axis=None, name=None):
    index = index if index.ndim == 1 else _C.reshape(index, [-1])
    return _C.index_select(x, index, 0 if axis is None else int(_scalar(axis)))


def index_select(x, index, axis=0, name=None):
    return _C.index_select(x, index, int(axis))


def gather_nd(x, index, name=None):
    return _C.gather_nd(x, index)


def scatter(x, index, updates, overwrite=True, name=None):
    return _C.scatter(x, index, updates, bool(overwrite))


def masked_select(x, mask, name=None):
    return _C.masked_select(x, mask)


def take_along_axis(arr, indices, axis):
    return _C.take_along_axis(arr, indices, int(axis))


def _scan(fn, x, axis, dtype):
    if dtype is not None:
        x = _C.cast(x, dtype)
    if axis is None:
        return fn(_C.reshape(x, [-1]), 0)
    return fn(x, int(axis))


def cumsum(x, axis=None, dtype=None, name=None):
    return _scan(_C.cumsum, x, axis, dtype)


def cumprod(x, dim=None, dtype=None, name=None):
    """Paddle's cumprod: running product along dim (None: of the flattened tensor)."""
    return _scan(_C.cumprod, x, dim, dtype)


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    if dtype is not None:
        x = _C.cast(x, dtype)
    return _to_shape1(_C.prod(x, _axes(axis), bool(keepdim)))


def max(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return _to_shape1(_C.amax(x, _axes(axis), bool(keepdim)))


def min(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return _to_shape1(_C.amin(x, _axes(axis), bool(keepdim)))


amax, amin = max, min


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    return _to_shape1(_C.var(x, _axes(axis), bool(unbiased), bool(keepdim)))


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    return _to_shape1(_C.std(x, _axes(axis), bool(unbiased), bool(keepdim)))


def norm(x, p="fro", axis=None, keepdim=False, name=None):
    if p == "fro":
        p = 2.0
    elif isinstance(p, str):
        raise ValueError(f"norm: p must be 'fro' or a number, got '{p}'")
    return _to_shape1(_C.norm(x, float(p), _axes(axis), bool(keepdim)))


# ---- masks ----
def _binary_mask(fn):
    def op(x, y, name=None):
        if not isinstance(y, Tensor):
            y = _like(y, x)
        if not isinstance(x, Tensor):
            x = _like(x, y)
        return fn(x, y)
    op.__name__ = fn.__name__
    op.__doc__ = f"Paddle's {fn.__name__}(x, y): a bool tensor, broadcasting (crew._C.{fn.__name__})."
    return op


equal = _binary_mask(_C.equal)
not_equal = _binary_mask(_C.not_equal)
less_than = _binary_mask(_C.less_than)
less_equal = _binary_mask(_C.less_equal)
greater_than = _binary_mask(_C.greater_than)
greater_equal = _binary_mask(_C.greater_equal)
logical_and = _binary_mask(_C.logical_and)
logical_or = _binary_mask(_C.logical_or)
logical_xor = _binary_mask(_C.logical_xor)
logical_not = _unary(_C.logical_not)
isnan = _unary(_C.isnan)
isinf = _unary(_C.isinf)
isfinite = _unary(_C.isfinite)


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    return _C.isclose(x, y, float(rtol), float(atol), bool(equal_nan))


def _bool1(value):
    return _C.full([1], 1.0 if value else 0.0, "bool")


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A bool tensor of shape [1], as Paddle 2.4 returns."""
    return _bool1(_C._allclose(x, y, float(rtol), float(atol), bool(equal_nan)))


def equal_all(x, y, name=None):
    return _bool1(_C._equal_all(x, y))


def all(x, axis=None, keepdim=False, name=None):  # noqa: A001
    if axis is not None:
        raise ValueError("all: crew reduces over every axis only (axis=None)")
    return _bool1(_C._all(x))


def any(x, axis=None, keepdim=False, name=None):  # noqa: A001
    if axis is not None:
        raise ValueError("any: crew reduces over every axis only (axis=None)")
    return _bool1(_C._any(x))


# ---- shape ----
def tile(x, repeat_times, name=None):
    return _C.tile(x, _shape(repeat_times, "tile"))


def expand(x, shape, name=None):
    return _C.expand(x, _shape(shape, "expand"))


def broadcast_to(x, shape, name=None):
    return _C.expand(x, _shape(shape, "broadcast_to"))


def expand_as(x, y, name=None):
    return _C.expand(x, list(y.shape))


def flip(x, axis, name=None):
    return _C.flip(x, _axes(axis))


def roll(x, shifts, axis=None, name=None):
    shifts = _axes(shifts)
    return _C.roll(x, shifts, _axes(axis))


def chunk(x, chunks, axis=0, name=None):
    return _C.split(x, int(chunks), int(_scalar(axis)))


def unbind(input, axis=0):  # noqa: A002
    return _C.unbind(input, int(axis))


NAMES = ["zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye", "rand",
         "uniform", "randn", "standard_normal", "normal", "randint", "randperm", "abs", "sqrt", "rsqrt", "square",
         "sin", "cos", "tanh", "sigmoid", "erf", "sign", "floor", "ceil", "round", "tan", "log2", "log10", "log1p",
         "expm1", "trunc", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "clip", "scale", "cast", "where", "topk", "sort", "argsort", "gather", "index_select", "gather_nd",
         "scatter", "masked_select", "take_along_axis", "cumsum", "cumprod", "prod", "max", "min", "amax", "amin",
         "var", "std", "norm", "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal",
         "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf", "isfinite", "isclose",
         "allclose", "equal_all", "all", "any", "tile", "expand", "broadcast_to", "expand_as", "flip", "roll",
         "chunk", "unbind"]


__all__ = list(NAMES)
