"""Paddle's default floating dtype: set_default_dtype / get_default_dtype.

As in Paddle 2.4 it decides the dtype of what is made without a dtype:
- to_tensor of Python floats (NumPy arrays and tensors keep theirs);
- rand, randn, standard_normal, uniform and normal (zeros, ones, full, eye, linspace and
  arange stay float32 as in Paddle 2.4);
- the parameters and floating buffers of layers built after the call (the built-in layers and
  create_parameter); under float16/bfloat16 the norm layers keep float32 parameters, as
  Paddle's do.
Set it before building the model, as Paddle's programs do.
"""
import numpy as np

from . import _C

_ALLOWED = ("float16", "float32", "float64", "bfloat16")
FLOATING = (_C.dtype.float32, _C.dtype.float64, _C.dtype.bfloat16, _C.dtype.float16)
_default = "float32"


def _name_of(d):
    if isinstance(d, str):
        return d
    if isinstance(d, _C.dtype):
        return next(k for k, v in _C.dtype.__members__.items() if v == d)
    try:
        return np.dtype(d).name
    except TypeError:
        return repr(d)


def set_default_dtype(d):
    """Sets the default floating dtype: 'float16', 'float32', 'float64' or 'bfloat16' (a name, a
    crew dtype or a NumPy dtype)."""
    global _default
    name = _name_of(d)
    if name not in _ALLOWED:
        raise TypeError(f"set_default_dtype only supports [{', '.join(_ALLOWED)}], but received {name}")
    _default = name


def get_default_dtype():
    """The default floating dtype's name ('float32' unless set_default_dtype changed it)."""
    return _default


def default_float():
    """The default floating dtype as a crew dtype."""
    return _C.dtype.__members__[_default]


def norm_dtype():
    """The dtype of a norm layer's parameters and statistics: the default, but float32 when the
    default is float16 or bfloat16 (Paddle's rule)."""
    return _C.dtype.float32 if _default in ("float16", "bfloat16") else default_float()


def convert_layer(layer, norm=False):
    """Converts a newly built layer's float32 parameters and buffers to the default dtype
    (norm_dtype() for a norm layer)."""
    want = norm_dtype() if norm else default_float()
    if want == _C.dtype.float32:
        return layer
    for t in list(layer._parameters.values()) + list(layer._buffers.values()):
        if isinstance(t, _C.Tensor) and t.dtype == _C.dtype.float32:
            _C._convert_tensor_(t, want)
    return layer
