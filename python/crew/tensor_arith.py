"""Paddle 2.4's element-wise binary math and products beyond crew._C's add ... pow (issue 30):
maximum, minimum, floor_divide, remainder (mod), mm, bmm, dot; and argmin, median, numel,
empty, empty_like.

Each one composes crew's differentiable C++ ops (where, comparisons, floor, matmul, topk,
sum), so gradients flow where Paddle has them.
"""
import builtins
import itertools
import operator

from . import _C
from . import tensor_math as _tm
from .paddle_args import argmax as _argmax

Tensor = _C.Tensor
_INTEGERS = (_C.dtype.int32, _C.dtype.int64, _C.dtype.uint8)


def _pair(x, y, op):
    """x and y as tensors (a Python number takes the other's dtype)."""
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        raise TypeError(f"{op}(): x or y must be a crew.Tensor, got {type(x).__name__} and {type(y).__name__}")
    if not isinstance(y, Tensor):
        y = _tm._like(y, x)
    if not isinstance(x, Tensor):
        x = _tm._like(x, y)
    return x, y


def maximum(x, y, name=None):
    """Element-wise max, broadcasting; the gradient goes to x where x > y, else to y (Paddle's)."""
    x, y = _pair(x, y, "maximum")
    return _C.where(_C.greater_than(x, y), x, y)


def minimum(x, y, name=None):
    """Element-wise min, broadcasting; the gradient goes to x where x < y, else to y (Paddle's)."""
    x, y = _pair(x, y, "minimum")
    return _C.where(_C.less_than(x, y), x, y)


def _integer_operands(x, y, op):
    if x.dtype not in _INTEGERS or y.dtype not in _INTEGERS:
        raise TypeError(f"{op}(): x and y must be int32 or int64 tensors in Paddle 2.4, got {x.dtype} and {y.dtype}")
    if _C._any(_C.equal(y, _C.full([1], 0.0, y.dtype))):
        raise ZeroDivisionError(f"{op}(): y holds a zero (integer division by zero)")


def floor_divide(x, y, name=None):
    """Paddle 2.4's floor_divide of int32/int64 tensors: the quotient rounded toward zero
    (trunc(x / y), as Paddle 2.4 computes it despite the name), broadcasting, x's dtype.
    Exact for |x| < 2**53."""
    x, y = _pair(x, y, "floor_divide")
    _integer_operands(x, y, "floor_divide")
    q = _C.cast(x, "float64") / _C.cast(y, "float64")
    return _C.cast(_C.sign(q) * _C.floor(_C.abs(q)), x.dtype)


def remainder(x, y, name=None):
    """Paddle's remainder (mod): x - floor(x / y) * y, so the result takes y's sign (Python's
    %), broadcasting; integer tensors exact for |x| < 2**53, float ones with a gradient."""
    x, y = _pair(x, y, "remainder")
    if x.dtype in _INTEGERS or y.dtype in _INTEGERS:
        _integer_operands(x, y, "remainder")
        xf, yf = _C.cast(x, "float64"), _C.cast(y, "float64")
        return _C.cast(xf - _C.floor(xf / yf) * yf, x.dtype)
    return x - _C.floor(x / y) * y


mod = remainder
floor_mod = remainder


def mm(input, mat2, name=None):  # noqa: A002 (Paddle's name)
    """Paddle's mm: the matrix product of input and mat2 (batched and broadcast as matmul)."""
    return _C.matmul(input, mat2)


def bmm(x, y, name=None):
    """Paddle's bmm: [b, m, k] @ [b, k, n] -> [b, m, n]; ValueError for other shapes."""
    if x.ndim != 3 or y.ndim != 3:
        raise ValueError(f"bmm: x and y must be 3-d, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
        raise ValueError(f"bmm: shapes {list(x.shape)} and {list(y.shape)} do not match "
                         "([b, m, k] and [b, k, n])")
    return _C.matmul(x, y)


def dot(x, y, name=None):
    """Paddle 2.4's dot: 1-d x, y of one length -> shape [1]; 2-d [n, d] -> [n, 1] (row-wise)."""
    if x.ndim not in (1, 2) or list(x.shape) != list(y.shape):
        raise ValueError(f"dot: x and y must be 1-d or 2-d of one shape, got {list(x.shape)} and {list(y.shape)}")
    return _C.sum(x * y, -1, True)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None):
    """Paddle's argmin: the first smallest element's index; axis None flattens ([1] result)."""
    if x.dtype in (_C.dtype.uint8, _C.dtype.bool):
        x = _C.cast(x, "int64")
    return _argmax(-x, axis, keepdim, dtype)


def median(x, axis=None, keepdim=False, name=None):
    """Paddle 2.4's median: the middle value along axis (the mean of the two middle ones for an
    even count), float64 for float64 input, else float32; axis None: of every element, shape
    [1] ([1] * ndim with keepdim). Differentiable through the selected values."""
    if not isinstance(x, Tensor):
        raise TypeError(f"median(): argument 'x' must be a crew.Tensor, got {type(x).__name__}")
    ndim = x.ndim
    flat = axis is None
    v = _C.reshape(x, [-1]) if flat else x
    a = 0 if flat else int(axis)
    if not -builtins.max(v.ndim, 1) <= a < builtins.max(v.ndim, 1):
        raise ValueError(f"median: axis {axis} is out of range for a tensor of {v.ndim} dimensions")
    a %= builtins.max(v.ndim, 1)
    n = v.shape[a]
    if n == 0:
        raise ValueError("median: the reduced axis is empty")
    out_dtype = "float64" if x.dtype == _C.dtype.float64 else "float32"
    low = _C.topk(v, n // 2 + 1, a, False)[0]
    if x.dtype not in (_C.dtype.float32, _C.dtype.float64):
        low = _C.cast(low, out_dtype)
    lo = n // 2 - 1 if n % 2 == 0 else n // 2
    mid = _C.mean(_C.slice(low, [a], [lo], [n // 2 + 1]), a, True)
    if flat:
        return _C.reshape(mid, [1] * ndim if keepdim and ndim > 0 else [1])
    return mid if keepdim else _C.squeeze(mid, a)


def numel(x, name=None):
    """Paddle's numel: the element count as an int64 tensor of shape [1]."""
    return _C.full([1], float(x.size), "int64")


def empty(shape, dtype=None, name=None):
    """Paddle's empty: a tensor of the shape whose values are unspecified (crew fills zeros)."""
    return _C.full(_tm._shape(shape, "empty"), 0.0, _tm._dtype(dtype))


def empty_like(x, dtype=None, name=None):
    return _C.full(list(x.shape), 0.0, x.dtype if dtype is None else dtype)


NAMES = ["maximum", "minimum", "floor_divide", "remainder", "mod", "floor_mod", "mm", "bmm", "dot", "argmin",
         "median", "numel", "empty", "empty_like"]
METHODS = ["maximum", "minimum", "floor_divide", "remainder", "mod", "floor_mod", "mm", "bmm", "dot", "argmin",
           "median"]
__all__ = list(NAMES)


def _binary_method(fn, symbol):
    def method(self, y, name=None):
        return fn(self, y) if isinstance(y, Tensor) else symbol(self, y)
    method.__name__ = fn.__name__
    method.__doc__ = f"Paddle's Tensor.{fn.__name__}(y): as crew.{fn.__name__}(self, y) (y may be a number)."
    return method


_generated_names = itertools.count()


def _get_name(self):
    """Paddle's Tensor.name: the name given (a parameter's), else generated_tensor_<n>, fixed
    for this Python object once read."""
    d = self.__dict__
    if "_paddle_name" not in d:
        d["_paddle_name"] = f"generated_tensor_{next(_generated_names)}"
    return d["_paddle_name"]


def _set_name(self, value):
    self.__dict__["_paddle_name"] = str(value)


class HookRemoveHelper:
    """What Tensor.register_hook returns: remove() takes the hook off again."""

    def __init__(self, tensor, hook_id):
        self._tensor, self._id = tensor, hook_id

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_grad_hook(self._id)
            self._tensor = None
            return True
        return False


def _register_hook(self, hook):
    """Paddle's Tensor.register_hook(hook): hook(grad) runs when this tensor's gradient is
    complete in backward; a Tensor it returns replaces the gradient (None keeps it). For a
    tensor with stop_gradient=True: RuntimeError, as Paddle raises."""
    if not callable(hook):
        raise TypeError(f"register_hook(): argument 'hook' must be callable, got {type(hook).__name__}")
    if self.stop_gradient:
        raise RuntimeError("register_hook: cannot register a hook on a tensor whose stop_gradient is True")
    return HookRemoveHelper(self, self._register_grad_hook(hook))


def install():
    """Tensor methods of the same names, `//` and `%`, tolist, add ... divide, name."""
    for name in METHODS:
        setattr(Tensor, name, globals()[name])
    Tensor.tolist = lambda self: self.numpy().tolist()
    Tensor.add = _binary_method(_C.add, operator.add)
    Tensor.subtract = _binary_method(_C.subtract, operator.sub)
    Tensor.multiply = _binary_method(_C.multiply, operator.mul)
    Tensor.divide = _binary_method(_C.divide, operator.truediv)
    Tensor.name = property(_get_name, _set_name)
    Tensor.register_hook = _register_hook
    Tensor.__floordiv__ = lambda self, other: floor_divide(self, other)
    Tensor.__mod__ = lambda self, other: remainder(self, other)


install()
