"""Tensor's Paddle 2.4 methods, operators, in-place forms, conversions and printing.

Methods are the functions of crew.tensor_math bound to Tensor; in-place methods (add_,
scale_, clip_, ...) compute out of place in C++ and write the result back (Tensor._assign_,
which refuses tensors that take part in a graph, as Paddle does for leaves). Printing
follows Paddle 2.4's format, nested brackets included:

    Tensor(shape=[2, 3], dtype=float32, place=Place(cpu), stop_gradient=True,
           [[1., 2., 3.],
            [4., 5., 6.]])
"""
import numpy as np

from . import _C
from . import tensor_math as tm

Tensor = _C.Tensor


class _PrintOptions:
    precision = 8
    threshold = 1000
    edgeitems = 3
    sci_mode = False
    linewidth = 80


_OPTIONS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None, linewidth=None):
    """Paddle's set_printoptions: digits, the element count beyond which rows are cut, the
    rows kept at each end when they are, scientific notation."""
    for key, value, kind in (("precision", precision, int), ("threshold", threshold, int),
                             ("edgeitems", edgeitems, int), ("sci_mode", sci_mode, bool),
                             ("linewidth", linewidth, int)):
        if value is not None:
            if not isinstance(value, kind):
                raise TypeError(f"set_printoptions(): argument '{key}' must be {kind.__name__}, "
                                f"got {type(value).__name__}")
            setattr(_OPTIONS, key, value)


def _item_text(v):
    if isinstance(v, (np.floating, float)):
        if _OPTIONS.sci_mode:
            return f"{v:.{_OPTIONS.precision}e}"
        if np.ceil(v) == v:  # whole numbers print as "3." (and inf as "inf.", as Paddle)
            return f"{v:.0f}."
        return f"{v:.{_OPTIONS.precision}f}"
    return str(v)


def _edges(a, summarize):
    """The elements printing shows (both ends of each long axis when summarizing)."""
    if a.ndim == 0:
        return [a[()]]
    e = _OPTIONS.edgeitems
    rows = list(a[:e]) + list(a[-e:]) if summarize and a.shape[0] > 2 * e else list(a)
    return rows if a.ndim == 1 else [v for r in rows for v in _edges(r, summarize)]


def _pad(v, width, signed):
    text = _item_text(v)
    if width <= len(text):
        return text
    if signed and not v < 0:
        return " " + text.ljust(width - 1)
    return text.ljust(width)


def _format(a, summarize, indent, width, signed):
    e = _OPTIONS.edgeitems
    if a.ndim == 0:
        return _pad(a[()], width, signed)
    cut = summarize and a.shape[0] > 2 * e
    parts = list(a[:e]) + [None] + list(a[-e:]) if cut else list(a)
    if a.ndim == 1:
        return "[" + ", ".join("..." if v is None else _pad(v, width, signed) for v in parts) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join("..." if r is None else _format(r, summarize, indent + 1, width, signed) for r in parts) + "]"


def to_string(t, prefix="Tensor"):
    """The text Paddle 2.4 prints for a tensor."""
    a = t.numpy()
    summarize = a.size > _OPTIONS.threshold
    shown = _edges(a, summarize)
    width = max((len(_item_text(v)) for v in shown), default=0)
    signed = any(v < 0 for v in shown) if a.dtype.kind != "b" else False
    indent = len(prefix) + 1
    data = _format(a, summarize, indent, width, signed)
    dtype = str(t.dtype).split(".")[-1]
    return (f"{prefix}(shape={list(t.shape)}, dtype={dtype}, place={t.place}, "
            f"stop_gradient={t.stop_gradient},\n{' ' * indent}{data})")


def _scalar_of(t, kind):
    if t.size != 1:
        raise ValueError(f"only a tensor of one element converts to a Python {kind.__name__}, "
                         f"this one has shape {list(t.shape)}")
    return kind(t.item())


def _index(t):
    if t.dtype not in (_C.dtype.int32, _C.dtype.int64, _C.dtype.uint8):
        raise TypeError(f"only integer tensors can be used as an index, got {str(t.dtype).split('.')[-1]}")
    return _scalar_of(t, int)


def _inplace(fn, op):
    def method(self, *args, **kwargs):
        self._assign_(fn(self, *args, **kwargs), op)
        return self
    method.__name__ = op
    method.__doc__ = f"In-place {op[:-1]}: writes the result into this tensor and returns it."
    return method


def _operator(fn):
    """fn as an operator: NotImplemented for an operand that is no tensor, number, list or array
    (so that `t == None` is False, as Python's identity comparison, not an error)."""
    def op(self, other):
        if other is None or not isinstance(other, (Tensor, int, float, np.number, np.ndarray, list, tuple)):
            return NotImplemented
        return fn(self, other)
    op.__name__ = fn.__name__
    return op


_METHODS = ["abs", "sqrt", "rsqrt", "square", "sin", "cos", "tanh", "sigmoid", "erf", "sign", "floor", "ceil",
            "round", "tan", "log2", "log10", "log1p", "expm1", "trunc", "asin", "acos", "atan", "sinh", "cosh",
            "asinh", "acosh", "atanh", "cumprod", "clip", "scale", "cast", "topk", "sort", "argsort",
            "gather", "index_select", "gather_nd", "scatter", "masked_select", "take_along_axis", "cumsum", "prod",
            "max", "min", "amax", "amin", "var", "std", "norm", "equal", "not_equal", "less_than", "less_equal",
            "greater_than", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
            "isinf", "isfinite", "isclose", "allclose", "equal_all", "all", "any", "tile", "expand", "broadcast_to",
            "expand_as", "flip", "roll", "chunk", "unbind"]


def install():
    for name in _METHODS:
        setattr(Tensor, name, getattr(tm, name))
    Tensor.where = lambda self, x=None, y=None, name=None: tm.where(self, x, y)
    for name, fn in (("__eq__", tm.equal), ("__ne__", tm.not_equal), ("__lt__", tm.less_than),
                     ("__le__", tm.less_equal), ("__gt__", tm.greater_than), ("__ge__", tm.greater_equal),
                     ("__and__", tm.logical_and), ("__or__", tm.logical_or), ("__xor__", tm.logical_xor)):
        setattr(Tensor, name, _operator(fn))
    Tensor.__hash__ = object.__hash__
    Tensor.__invert__ = lambda self: tm.logical_not(self)
    Tensor.__abs__ = lambda self: tm.abs(self)
    Tensor.__float__ = lambda self: _scalar_of(self, float)
    Tensor.__int__ = lambda self: _scalar_of(self, int)
    Tensor.__bool__ = lambda self: _scalar_of(self, bool)
    Tensor.__index__ = _index
    Tensor.__repr__ = Tensor.__str__ = lambda self: to_string(self)
    Tensor.__format__ = lambda self, spec: format(self.item(), spec) if spec and self.size == 1 else str(self)
    inplace = {
        "add_": lambda x, y: x + y, "subtract_": lambda x, y: x - y, "multiply_": lambda x, y: x * y,
        "divide_": lambda x, y: x / y, "scale_": tm.scale, "clip_": tm.clip,
        "zero_": lambda x: tm.zeros_like(x), "fill_": lambda x, value: tm.full_like(x, value),
        "sqrt_": tm.sqrt, "rsqrt_": tm.rsqrt, "exp_": _C.exp, "tanh_": tm.tanh, "abs_": tm.abs,
        "square_": tm.square, "floor_": tm.floor,
        "set_value": lambda x, value: value if isinstance(value, Tensor) else _C.to_tensor(np.asarray(value)),
    }
    for name, fn in inplace.items():
        setattr(Tensor, name, _inplace(fn, name))
    Tensor.copy_ = _inplace(lambda x, src, blocking=True: src, "copy_")


install()
