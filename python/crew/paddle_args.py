"""Paddle 2.4's arguments for functions crew._C already has (issue 30, item 5).

crew._C binds the C++ operations with the arguments C++ needs; Paddle's Python API takes
more: argmax without an axis flattens, squeeze without an axis drops every extent 1, reshape
copies the input's extent where the shape says 0, flatten takes start and stop axes, max/min
take lists of axes, an integer tensor divided by a number is a float32 tensor, to_tensor of a
Python scalar has shape [1], F.linear's bias is optional, optimizers have clear_gradients.
Each wrapper here computes with the differentiable C++ ops, so gradients flow as before.
"""
import numpy as np

from . import _C
from .default_dtype import get_default_dtype

Tensor = _C.Tensor
_INTEGER = (_C.dtype.int32, _C.dtype.int64, _C.dtype.uint8)


def _type_error(op, arg, expected, value):
    return TypeError(f"{op}(): argument '{arg}' must be {expected}, got {type(value).__name__}")


def _axes(axis, ndim, op):
    """A list of axes (None: all) normalised to [0, ndim); ValueError naming op for a bad one."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{op}: axis {a} is out of range for a tensor of {ndim} dimensions")
        out.append(int(a) % max(ndim, 1))
    return out


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None):
    """Paddle's argmax: axis None flattens (a [1] result); keepdim keeps the reduced axis."""
    if dtype not in ("int64", _C.dtype.int64):
        raise ValueError(f"argmax: dtype must be int64 in crew, got {dtype}")
    if axis is None:
        return _C.reshape(_C.argmax(_C.reshape(x, [-1]), 0), [1])
    if not isinstance(axis, (int, np.integer)):
        raise _type_error("argmax", "axis", "int (64-bit)", axis)
    (a,) = _axes(axis, x.ndim, "argmax")
    out = _C.argmax(x, a)
    return _C.unsqueeze(out, a) if keepdim else out


def squeeze(x, axis=None, name=None):
    """Paddle's squeeze: drops the given axes of extent 1 (every one when axis is None); an
    axis whose extent is not 1 is left as it is, as in Paddle."""
    axes = _axes(axis, x.ndim, "squeeze")
    keep = [d for i, d in enumerate(x.shape) if not (i in axes and d == 1)]
    return _C.reshape(x, keep) if len(keep) != x.ndim else x


def reshape(x, shape, name=None):
    """Paddle's reshape: 0 copies the input's extent at that position, one -1 is inferred."""
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, (int, np.integer, Tensor)) for d in shape):
        raise _type_error("reshape", "shape", "a list of int (64-bit)", shape)
    dims = [int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape]
    for i, d in enumerate(dims):
        if d == 0:
            if i >= x.ndim:
                raise ValueError(f"reshape: shape {list(shape)} has 0 at position {i}, but the input has "
                                 f"only {x.ndim} dimensions")
            dims[i] = x.shape[i]
    return _C.reshape(x, dims)


reshape.__doc__ += "\n\n    x: the tensor; shape: a list or tuple of ints (or a 1-d int tensor)."


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Paddle's flatten: axes start_axis..stop_axis become one."""
    if x.ndim == 0:
        return _C.reshape(x, [1])
    start, stop = _axes([start_axis, stop_axis], x.ndim, "flatten")
    if start > stop:
        raise ValueError(f"flatten: start_axis {start_axis} is after stop_axis {stop_axis}")
    shape = list(x.shape)
    return _C.reshape(x, shape[:start] + [-1] + shape[stop + 1:])


def _float_if_integer(t):
    return t.astype("float32") if t.dtype in _INTEGER else t


def _install():
    plain_div, plain_rdiv = Tensor.__truediv__, Tensor.__rtruediv__

    def truediv(a, b):
        if isinstance(b, Tensor):
            return plain_div(_float_if_integer(a), _float_if_integer(b))
        return plain_div(_float_if_integer(a), b)

    def rtruediv(a, b):
        return plain_rdiv(_float_if_integer(a), b)

    Tensor.__truediv__, Tensor.__rtruediv__ = truediv, rtruediv
    for name, fn in (("argmax", argmax), ("squeeze", squeeze), ("reshape", reshape), ("flatten", flatten)):
        setattr(Tensor, name, fn)
    opt = _C.optimizer.Optimizer
    if not hasattr(opt, "clear_gradients"):
        opt.clear_gradients = lambda self, set_to_zero=True: self.clear_grad(set_to_zero)


def to_tensor(data, dtype=None, place=None, stop_gradient=True):
    """Paddle 2.4's to_tensor: a Python or NumPy scalar becomes a tensor of shape [1]."""
    if isinstance(data, (bool, int, float, np.number, np.bool_)):
        data = [data]
    if dtype is None and get_default_dtype() != "float32" and _python_floats(data):
        dtype = get_default_dtype()
    return _C.to_tensor(data, dtype=dtype, place=place, stop_gradient=stop_gradient)


def _python_floats(data):
    """Whether data (not a NumPy array or a tensor) holds floats, which take the default dtype
    (Paddle converts what NumPy reads as float64)."""
    if not isinstance(data, (list, tuple)):
        return False
    try:
        return np.asarray(data).dtype == np.float64
    except (ValueError, TypeError):
        return False


_install()
