"""no_grad and the Tensor methods bound straight from crew._C functions.

Comparisons, max/min and the rest of Paddle's tensor math are in tensor_math.py (computed
in C++), their Tensor methods and operators in tensor_methods.py.
"""
import functools

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


def _method(fn):
    """A C++ function bound as a Tensor method (builtins do not bind `self` by themselves)."""
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _install_operators():
    # reshape, squeeze, flatten and argmax take Paddle's arguments: paddle_args installs them.
    for name in ("unsqueeze", "transpose", "split", "matmul", "sum", "mean", "exp", "log", "pow"):
        setattr(Tensor, name, _method(getattr(_C, name)))
    Tensor.T = property(lambda t: _C.transpose(t, list(range(t.ndim - 1, -1, -1))))


_install_operators()
