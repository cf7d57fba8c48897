"""Paddle 2.4's conv3d and Conv3D over crew's oneDNN conv2d (issue 30).

A 3-D convolution is the sum over the kernel's depth taps k of 2-D convolutions: for tap k,
the input's depth slices k * dilation + od * stride (od = 0 .. D' - 1) are folded into the
batch ([N * D', C, H, W]) and convolved with weight[:, :, k]. The FLOPs are a 3-D
convolution's; each tap's slices are gathered once. Every step is a differentiable crew op,
so gradients flow to x, weight and bias.
"""
import numpy as np

from .. import _C
from .composed_functional import _pad_axis
from .functional_conv import _format, _n, _same_pads, conv2d
from .layers_extra import _ConvNd, _ints


def _padding3d(padding, kernel, dilation, stride, size):
    """Paddle's padding forms for 3 spatial axes -> [front, back, top, bottom, left, right]:
    an int, 3 ints, 6 ints, [[0,0],[0,0],[f,b],[t,b],[l,r]], 'VALID' or 'SAME'."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [0] * 6
        if mode != "SAME":
            raise ValueError(f"conv3d: padding='{padding}': expected 'SAME', 'VALID' or numbers")
        return _same_pads(kernel, dilation, stride, size)
    if isinstance(padding, (int, np.integer)):
        return [int(padding)] * 6
    padding = list(padding)
    if len(padding) == 5 and all(isinstance(p, (list, tuple)) for p in padding):
        if list(padding[0]) != [0, 0] or list(padding[1]) != [0, 0]:
            raise ValueError(f"conv3d: padding {padding}: batch and channel axes cannot be padded")
        return [int(v) for p in padding[2:] for v in p]
    if len(padding) == 3:
        return [int(p) for p in padding for _ in range(2)]
    if len(padding) == 6:
        return [int(p) for p in padding]
    raise ValueError(f"conv3d: padding {padding}: expected an int, 3 or 6 ints, or 'SAME'/'VALID'")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCDHW", name=None):
    """x [N, C, D, H, W], weight [O, C/groups, kd, kh, kw] -> [N, O, D', H', W']."""
    _format("conv3d", data_format, ("NCDHW",))
    if x.ndim != 5 or weight.ndim != 5:
        raise ValueError(f"conv3d: x and weight must be 5-d, got shapes {list(x.shape)} and {list(weight.shape)}")
    s, d = _n(stride, 3, "conv3d", "stride"), _n(dilation, 3, "conv3d", "dilation")
    pads = _padding3d(padding, list(weight.shape[2:]), d, s, list(x.shape[2:]))
    x = _pad_axis(x, 2, pads[0], pads[1], "constant", 0.0)
    n, c, depth, h, w = x.shape
    o, kd = weight.shape[0], weight.shape[2]
    out_depth = (depth - d[0] * (kd - 1) - 1) // s[0] + 1
    if out_depth < 1:
        raise ValueError(f"conv3d: the kernel's depth {kd} (dilation {d[0]}) exceeds the padded input's depth {depth}")
    out = None
    for k in range(kd):
        first = k * d[0]
        taps = _C.to_tensor(np.arange(first, first + (out_depth - 1) * s[0] + 1, s[0], dtype=np.int64))
        xs = _C.transpose(_C.index_select(x, taps, 2), [0, 2, 1, 3, 4])  # [N, D', C, H, W]
        wk = _C.reshape(_C.slice(weight, [2], [k], [k + 1]), [o] + list(weight.shape[1:2]) + list(weight.shape[3:]))
        y = conv2d(_C.reshape(xs, [n * out_depth, c, h, w]), wk, None, s[1:], pads[2:], d[1:], groups)
        out = y if out is None else out + y
    out = _C.transpose(_C.reshape(out, [n, out_depth, o] + list(out.shape[2:])), [0, 2, 1, 3, 4])
    return out if bias is None else out + _C.reshape(bias, [1, o, 1, 1, 1])


class Conv3D(_ConvNd):
    """x [N, in_channels, D, H, W] -> [N, out_channels, D', H', W']; weight [out, in/groups,
    kd, kh, kw], initialised as Paddle's (Normal(0, sqrt(2 / fan_in)), bias zeros)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCDHW"):
        super().__init__()
        self._weight_attr, self._bias_attr = weight_attr, bias_attr
        self._make("Conv3D", in_channels, out_channels, groups,
                   [out_channels, in_channels // groups] + _ints(kernel_size, 3), data_format, "NCDHW", padding_mode)
        self._args = (stride, padding, dilation, groups)

    def forward(self, x):
        return conv3d(x, self.weight, self.bias, *self._args)
