"""Paddle's bitwise_and, bitwise_or, bitwise_xor and bitwise_not on bool and integer tensors
(broadcasting; the result has the operands' dtype; no gradient, as Paddle's), and the
operators & | ^ ~ on integer tensors (on bool and floating tensors they stay logical).

Bool operands run crew's logical kernels; integer ones NumPy's bitwise functions.
"""
import numpy as np

from . import _C
from . import tensor_math as _tm
from .tensor_arith import _INTEGERS

Tensor = _C.Tensor


def _operands(op, x, y):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): x must be a crew.Tensor, got {type(x).__name__}")
    if not isinstance(y, Tensor):
        if x.dtype in _INTEGERS and isinstance(y, (int, np.integer)) and not isinstance(y, bool):
            y = _C.full([1], float(y), x.dtype)
        elif x.dtype == _C.dtype.bool and isinstance(y, (bool, np.bool_)):
            y = _C.to_tensor([bool(y)])
        else:
            raise TypeError(f"{op}(): y must be a crew.Tensor or a number of x's kind, got {type(y).__name__}")
    if x.dtype != y.dtype:
        raise TypeError(f"{op}(): x and y must have one dtype, got {x.dtype} and {y.dtype}")
    if x.dtype != _C.dtype.bool and x.dtype not in _INTEGERS:
        raise TypeError(f"{op}(): x must be a bool or integer tensor, got {x.dtype}")
    return x, y


def _binary(op_name, logical, numpy_fn):
    def op(x, y, out=None, name=None):
        x, y = _operands(op_name, x, y)
        if x.dtype == _C.dtype.bool:
            return logical(x, y)
        return _C.to_tensor(np.ascontiguousarray(numpy_fn(x.numpy(), y.numpy())), dtype=x.dtype)
    op.__name__ = op_name
    op.__doc__ = f"Paddle's {op_name}(x, y): element-wise, broadcasting, on bool or integer tensors."
    return op


bitwise_and = _binary("bitwise_and", _tm.logical_and, np.bitwise_and)
bitwise_or = _binary("bitwise_or", _tm.logical_or, np.bitwise_or)
bitwise_xor = _binary("bitwise_xor", _tm.logical_xor, np.bitwise_xor)


def bitwise_not(x, out=None, name=None):
    """Paddle's bitwise_not: ~x on a bool or integer tensor (logical not for bool)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"bitwise_not(): x must be a crew.Tensor, got {type(x).__name__}")
    if x.dtype == _C.dtype.bool:
        return _tm.logical_not(x)
    if x.dtype not in _INTEGERS:
        raise TypeError(f"bitwise_not(): x must be a bool or integer tensor, got {x.dtype}")
    return _C.to_tensor(np.ascontiguousarray(np.invert(x.numpy())), dtype=x.dtype)


def _operator(bitwise, previous):
    def op(self, other):
        return bitwise(self, other) if self.dtype in _INTEGERS else previous(self, other)
    return op


NAMES = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]
__all__ = list(NAMES)


def install():
    for name in NAMES:
        setattr(Tensor, name, globals()[name])
    for dunder, fn in (("__and__", bitwise_and), ("__or__", bitwise_or), ("__xor__", bitwise_xor)):
        setattr(Tensor, dunder, _operator(fn, getattr(Tensor, dunder)))
    previous_invert = Tensor.__invert__
    Tensor.__invert__ = lambda self: bitwise_not(self) if self.dtype in _INTEGERS else previous_invert(self)


install()
