"""Conv1D and Conv2DTranspose composed from crew's differentiable ops (slice, reshape,
concat, matmul): correct gradients, but slower than a kernel, one matmul per kernel tap.
Paddle's layouts: Conv1D weight [out, in/groups, k], Conv2DTranspose weight
[in, out, kh, kw]; default initialisation Normal(0, sqrt(2 / (prod(kernel) * in_channels)))
and a zero bias (Paddle's _ConvNd)."""
import math

from .. import _C
from .composed_functional import _pad_axis
from .initializer import Normal
from .layer import Layer


def _ints(v, n):
    return [int(v)] * n if isinstance(v, int) else [int(x) for x in v]


def _strided(x, axis, start, count, step):
    """x[..., start : start + count * step : step, ...] along `axis` (a differentiable copy)."""
    part = _C.slice(x, [axis], [start], [start + count * step])
    if step == 1:
        return part
    shape = list(part.shape)
    shape[axis:axis + 1] = [count, step]
    part = _C.reshape(part, shape)
    return _C.squeeze(_C.slice(part, [axis + 1], [0], [1]), axis + 1)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL", name=None):
    """x [N, C, L], weight [O, C/groups, k] -> [N, O, L']: im2col by strided slices, then one
    matmul per group."""
    if data_format != "NCL":
        raise ValueError(f"conv1d: data_format='{data_format}': crew supports 'NCL'")
    s, d = int(stride), int(dilation)
    p = padding if isinstance(padding, int) else int(padding[0])
    n, c, length = x.shape
    out_c, cg, k = weight.shape
    out_len = (length + 2 * p - d * (k - 1) - 1) // s + 1
    if out_len < 1:
        raise ValueError(f"conv1d: the input length {length} is too short for kernel {k}")
    need = (k - 1) * d + out_len * s  # room for the last strided window
    x = _pad_axis(x, 2, p, max(0, need - length - p), "constant", 0.0)
    taps = [_strided(x, 2, j * d, out_len, s) for j in range(k)]  # each [N, C, L']
    cols = _C.stack(taps, 2)  # [N, C, k, L']
    outs = []
    og = out_c // groups
    for g in range(groups):
        cols_g = _C.reshape(_C.slice(cols, [1], [g * cg], [(g + 1) * cg]), [n, cg * k, out_len])
        w_g = _C.reshape(_C.slice(weight, [0], [g * og], [(g + 1) * og]), [og, cg * k])
        outs.append(_C.matmul(w_g, cols_g))
    y = outs[0] if groups == 1 else _C.concat(outs, 1)
    return y if bias is None else y + _C.reshape(bias, [1, out_c, 1])


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
                     output_size=None, data_format="NCHW", name=None):
    """x [N, C, H, W], weight [C, O, kh, kw] -> [N, O, H', W'], H' = (H - 1) s - 2 p +
    d (kh - 1) + output_padding + 1: each tap's x-by-weight product is spread by the stride
    (zeros between) and added at its offset, then the padding is cropped."""
    if groups != 1 or data_format != "NCHW" or output_size is not None:
        raise ValueError("conv2d_transpose: crew supports groups=1, data_format='NCHW', output_size=None")
    s, p, op, d = _ints(stride, 2), _ints(padding, 2), _ints(output_padding, 2), _ints(dilation, 2)
    n, c, h, w = x.shape
    _, out_c, kh, kw = weight.shape
    full = [(h - 1) * s[0] + d[0] * (kh - 1) + 1 + op[0], (w - 1) * s[1] + d[1] * (kw - 1) + 1 + op[1]]
    flat = _C.reshape(x, [n, c, h * w])
    total = None
    for a in range(kh):
        for b in range(kw):
            w_ab = _C.transpose(_C.reshape(_C.slice(weight, [2, 3], [a, b], [a + 1, b + 1]), [c, out_c]), [1, 0])
            t = _C.reshape(_C.matmul(w_ab, flat), [n, out_c, h, w])
            t = _spread(_spread(t, 2, s[0]), 3, s[1])
            t = _pad_axis(t, 2, a * d[0], full[0] - a * d[0] - t.shape[2], "constant", 0.0)
            t = _pad_axis(t, 3, b * d[1], full[1] - b * d[1] - t.shape[3], "constant", 0.0)
            total = t if total is None else total + t
    y = _C.slice(total, [2, 3], [p[0], p[1]], [full[0] - p[0], full[1] - p[1]])
    return y if bias is None else y + _C.reshape(bias, [1, out_c, 1, 1])


def _spread(x, axis, step):
    """Inserts step - 1 zeros between neighbours along `axis`: size n -> (n - 1) step + 1."""
    if step == 1:
        return x
    size = x.shape[axis]
    col = _C.unsqueeze(x, axis + 1)  # [..., n, 1, ...]
    joined = _pad_axis(col, axis + 1, 0, step - 1, "constant", 0.0)  # [..., n, step, ...]
    shape = list(x.shape)
    shape[axis] = size * step
    return _C.slice(_C.reshape(joined, shape), [axis], [0], [(size - 1) * step + 1])


class _ConvNd(Layer):
    def _make(self, weight_shape, fan, out_channels, weight_attr, bias_attr):
        init = Normal(0.0, math.sqrt(2.0 / fan))
        self.weight = self.create_parameter(weight_shape, attr=weight_attr, default_initializer=init)
        self.bias = None
        if bias_attr is not False:
            self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)


class Conv1D(_ConvNd):
    """x [N, in_channels, L] -> [N, out_channels, L']; weight [out, in/groups, k], bias [out]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCL"):
        super().__init__()
        if padding_mode != "zeros" or data_format != "NCL" or isinstance(padding, str):
            raise ValueError("Conv1D: crew supports padding_mode='zeros', data_format='NCL', int padding")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv1D: in_channels {in_channels} and out_channels {out_channels} must be "
                             f"divisible by groups {groups}")
        k = _ints(kernel_size, 1)[0]
        self._args = (_ints(stride, 1)[0], _ints(padding, 1)[0], _ints(dilation, 1)[0], groups)
        self._make([out_channels, in_channels // groups, k], k * in_channels, out_channels, weight_attr, bias_attr)

    def forward(self, x):
        return conv1d(x, self.weight, self.bias, *self._args)


class Conv2DTranspose(_ConvNd):
    """x [N, in_channels, H, W] -> [N, out_channels, H', W']; weight [in, out, kh, kw]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, dilation=1, weight_attr=None, bias_attr=None, data_format="NCHW"):
        super().__init__()
        if groups != 1 or data_format != "NCHW" or isinstance(padding, str):
            raise ValueError("Conv2DTranspose: crew supports groups=1, data_format='NCHW', int padding")
        kh, kw = _ints(kernel_size, 2)
        self._args = (stride, padding, output_padding, dilation)
        self._make([in_channels, out_channels, kh, kw], kh * kw * in_channels, out_channels, weight_attr,
                   bias_attr)

    def forward(self, x, output_size=None):
        return conv2d_transpose(x, self.weight, self.bias, *self._args, output_size=output_size)


__all__ = ["Conv1D", "Conv2DTranspose", "conv1d", "conv2d_transpose"]
