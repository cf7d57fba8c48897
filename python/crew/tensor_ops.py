"""Tensor functions and operators written over crew._C: no_grad, comparisons, max/min.

Comparisons and max/min without an axis return new tensors computed through NumPy on the
tensor's memory (no copy in); like Paddle's, they record no gradient.
"""
import functools

import numpy as np

from . import _C

Tensor = _C.Tensor


class no_grad:
    """Context manager and decorator: operations inside record no graph (Paddle's no_grad)."""

    def __enter__(self):
        self._previous = _C.is_grad_enabled()
        _C.set_grad_enabled(False)
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self._previous)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper


def _array(x):
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _compare(np_op):
    def op(a, b):
        a_, b_ = _array(a), _array(b)
        try:
            out = np_op(a_, b_)
        except ValueError:
            raise ValueError(f"cannot compare tensors of shapes {list(a_.shape)} and {list(b_.shape)}")
        return _C.to_tensor(out)
    return op


equal = _compare(np.equal)
not_equal = _compare(np.not_equal)
less_than = _compare(np.less)
less_equal = _compare(np.less_equal)
greater_than = _compare(np.greater)
greater_equal = _compare(np.greater_equal)


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def max(x, axis=None, keepdim=False, name=None):  # noqa: A001 (Paddle's name)
    return _C.to_tensor(np.max(_array(x), axis=_np_axis(axis), keepdims=keepdim))


def min(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return _C.to_tensor(np.min(_array(x), axis=_np_axis(axis), keepdims=keepdim))


def _method(fn):
    """A C++ function bound as a Tensor method (builtins do not bind `self` by themselves)."""
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _install_operators():
    for name, fn in (("__eq__", equal), ("__ne__", not_equal), ("__lt__", less_than),
                     ("__le__", less_equal), ("__gt__", greater_than), ("__ge__", greater_equal)):
        setattr(Tensor, name, fn)
    Tensor.__hash__ = object.__hash__
    # reshape, squeeze, flatten and argmax take Paddle's arguments: paddle_args installs them.
    for name in ("unsqueeze", "transpose", "split", "matmul", "sum", "mean", "exp", "log", "pow"):
        setattr(Tensor, name, _method(getattr(_C, name)))
    Tensor.max = max
    Tensor.min = min
    Tensor.T = property(lambda t: _C.transpose(t, list(range(t.ndim - 1, -1, -1))))


_install_operators()
