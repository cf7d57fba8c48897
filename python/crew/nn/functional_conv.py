"""Paddle 2.4's convolution, pooling, resizing and reshaping functionals (crew.nn.functional):
conv2d, conv1d, conv2d_transpose, conv1d_transpose, max/avg pools 1-D and 2-D,
adaptive_avg_pool1d, interpolate/upsample, pixel_shuffle, unfold. Each maps Paddle's arguments
onto the C++ kernels in crew._C.nn.functional (oneDNN convolution, pooling, resampling); 1-D
forms are the 2-D kernels on a unit height."""
import numpy as np

from .. import _C
from .composed_functional import _pad_axis

_f = _C.nn.functional


def _n(v, n, op, what):
    """An int or a list of n ints -> a list of n ints."""
    if isinstance(v, (int, np.integer)):
        return [int(v)] * n
    v = [int(a) for a in v]
    if len(v) != n:
        raise ValueError(f"{op}: {what} must be an int or {n} ints, got {v}")
    return v


def _format(op, data_format, allowed):
    if data_format not in allowed:
        raise ValueError(f"{op}: data_format='{data_format}': crew supports {' or '.join(map(repr, allowed))} "
                         "(channels first); transpose channels-last input first")


def _const(value, like):
    return _C.to_tensor(np.asarray(value, dtype=np.float64 if like.dtype == _C.dtype.float64 else np.float32))


def _same_pads(kernel, dilation, stride, size):
    """Paddle's 'SAME' padding per spatial axis: [before, after, ...], the odd one after."""
    pads = []
    for k, d, s, n in zip(kernel, dilation, stride, size):
        total = max(0, (-(-n // s) - 1) * s + d * (k - 1) + 1 - n)
        pads += [total // 2, total - total // 2]
    return pads


def _conv_padding(op, padding, kernel, dilation, stride, size):
    """Paddle's padding forms for 2 spatial axes -> ([ph, pw] symmetric, [top, bottom, left,
    right] extra zeros to add first or None): an int, 2 ints, 4 ints [top, bottom, left,
    right], [[0,0],[0,0],[t,b],[l,r]], 'VALID' or 'SAME'."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [0, 0], None
        if mode != "SAME":
            raise ValueError(f"{op}: padding='{padding}': expected 'SAME', 'VALID' or numbers")
        pairs = _same_pads(kernel, dilation, stride, size)
    elif isinstance(padding, (int, np.integer)):
        return [int(padding)] * 2, None
    else:
        padding = list(padding)
        if len(padding) == 2 and all(isinstance(p, (int, np.integer)) for p in padding):
            return [int(p) for p in padding], None
        if len(padding) == 4 and all(isinstance(p, (list, tuple)) for p in padding):
            if list(padding[0]) != [0, 0] or list(padding[1]) != [0, 0]:
                raise ValueError(f"{op}: padding {padding}: batch and channel axes cannot be padded")
            padding = list(padding[2]) + list(padding[3])
        if len(padding) != 4:
            raise ValueError(f"{op}: padding {padding}: expected an int, 2 ints, 4 ints or 'SAME'/'VALID'")
        pairs = [int(p) for p in padding]
    if pairs[0] == pairs[1] and pairs[2] == pairs[3]:
        return [pairs[0], pairs[2]], None
    return [0, 0], pairs


def _pad_hw(x, extra):
    top, bottom, left, right = extra
    x = _pad_axis(x, 2, top, bottom, "constant", 0.0)
    return _pad_axis(x, 3, left, right, "constant", 0.0)


# ---- convolutions ----
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW", name=None):
    """x [N, C, H, W], weight [O, C/groups, kh, kw] -> [N, O, H', W'] (oneDNN convolution)."""
    _format("conv2d", data_format, ("NCHW",))
    s, d = _n(stride, 2, "conv2d", "stride"), _n(dilation, 2, "conv2d", "dilation")
    p, extra = _conv_padding("conv2d", padding, list(weight.shape[2:]), d, s, list(x.shape[2:]))
    if extra is not None:
        x = _pad_hw(x, extra)
    return _f.conv2d(x, weight, bias, s, p, d, int(groups))


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL", name=None):
    """x [N, C, L], weight [O, C/groups, k] -> [N, O, L']: conv2d on a unit height."""
    _format("conv1d", data_format, ("NCL",))
    if isinstance(padding, str):
        pad2 = padding
    else:
        pl = _n(padding, 1, "conv1d", "padding") if isinstance(padding, (int, np.integer)) or len(padding) == 1 \
            else [int(a) for a in padding]
        pad2 = [0, pl[0]] if len(pl) == 1 else [0, 0] + pl
    w = _C.unsqueeze(weight, 2)
    y = conv2d(_C.unsqueeze(x, 2), w, bias, [1, _n(stride, 1, "conv1d", "stride")[0]], pad2,
               [1, _n(dilation, 1, "conv1d", "dilation")[0]], groups)
    return _C.squeeze(y, 2)


def _transpose_padding(op, padding):
    if isinstance(padding, str):
        if padding.upper() != "VALID":
            raise ValueError(f"{op}: padding='{padding}': crew supports 'VALID' or numbers")
        return [0, 0]
    if isinstance(padding, (int, np.integer)):
        return [int(padding)] * 2
    padding = [int(a) for a in padding]
    if len(padding) == 2:
        return padding
    if len(padding) == 4 and padding[0] == padding[1] and padding[2] == padding[3]:
        return [padding[0], padding[2]]
    raise ValueError(f"{op}: padding {padding}: crew supports symmetric padding (an int or 2 ints)")


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
                     output_size=None, data_format="NCHW", name=None):
    """x [N, C, H, W], weight [C, O/groups, kh, kw] -> [N, O, H', W'], H' = (H - 1) stride -
    2 padding + dilation (kh - 1) + output_padding + 1 (or output_size, which sets
    output_padding). oneDNN's convolution backward-data primitive."""
    _format("conv2d_transpose", data_format, ("NCHW",))
    s, d = _n(stride, 2, "conv2d_transpose", "stride"), _n(dilation, 2, "conv2d_transpose", "dilation")
    p = _transpose_padding("conv2d_transpose", padding)
    op = _n(output_padding, 2, "conv2d_transpose", "output_padding")
    if output_size is not None:
        size = _n(output_size, 2, "conv2d_transpose", "output_size")
        for i in range(2):
            base = (x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (weight.shape[2 + i] - 1) + 1
            op[i] = size[i] - base
            if not 0 <= op[i] < s[i]:
                raise ValueError(f"conv2d_transpose: output_size {size} is not reachable: axis {i} must be in "
                                 f"[{base}, {base + s[i] - 1}]")
    return _f.conv2d_transpose(x, weight, bias, s, p, op, d, int(groups))


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
                     output_size=None, data_format="NCL", name=None):
    """x [N, C, L], weight [C, O/groups, k] -> [N, O, L']: conv2d_transpose on a unit height."""
    _format("conv1d_transpose", data_format, ("NCL",))
    one = lambda v, what: _n(v, 1, "conv1d_transpose", what)[0]  # noqa: E731
    size = None if output_size is None else [1, one(output_size, "output_size")]
    pad = padding if isinstance(padding, str) else [0, one(padding, "padding")]
    y = conv2d_transpose(_C.unsqueeze(x, 2), _C.unsqueeze(weight, 2), bias, [1, one(stride, "stride")], pad,
                         [0, one(output_padding, "output_padding")], [1, one(dilation, "dilation")], groups, size)
    return _C.squeeze(y, 2)


# ---- pooling ----
def _pool_out(size, k, s, p, ceil_mode):
    out = (-(-(size + 2 * p - k) // s) if ceil_mode else (size + 2 * p - k) // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW",
               name=None):
    """oneDNN max pooling; ceil_mode pads the bottom/right edge with float32's lowest value."""
    _format("max_pool2d", data_format, ("NCHW",))
    if return_mask:
        raise ValueError("max_pool2d: return_mask=True is not supported by crew")
    k = _n(kernel_size, 2, "max_pool2d", "kernel_size")
    s = k if stride is None else _n(stride, 2, "max_pool2d", "stride")
    p = _n(padding, 2, "max_pool2d", "padding")
    if ceil_mode:
        extra = [max(0, (_pool_out(x.shape[2 + i], k[i], s[i], p[i], True) - 1) * s[i] + k[i] - x.shape[2 + i]
                     - 2 * p[i]) for i in range(2)]
        low = float(np.finfo(np.float32).min)
        x = _pad_axis(_pad_axis(x, 2, 0, extra[0], "constant", low), 3, 0, extra[1], "constant", low)
    return _f.max_pool2d(x, k, s, p)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
               data_format="NCHW", name=None):
    """oneDNN average pooling. exclusive=True (Paddle's default) leaves the padding out of the
    divisor; exclusive=False pads with zeros first and counts them."""
    _format("avg_pool2d", data_format, ("NCHW",))
    if ceil_mode or divisor_override is not None:
        raise ValueError("avg_pool2d: ceil_mode=True and divisor_override are not supported by crew")
    k = _n(kernel_size, 2, "avg_pool2d", "kernel_size")
    s = k if stride is None else _n(stride, 2, "avg_pool2d", "stride")
    p = _n(padding, 2, "avg_pool2d", "padding")
    if not exclusive and any(p):
        x = _pad_hw(x, [p[0], p[0], p[1], p[1]])
        p = [0, 0]
    return _f.avg_pool2d(x, k, s, p)


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
    k = _n(kernel_size, 1, "max_pool1d", "kernel_size")[0]
    s = k if stride is None else _n(stride, 1, "max_pool1d", "stride")[0]
    y = max_pool2d(_C.unsqueeze(x, 2), [1, k], [1, s], [0, _n(padding, 1, "max_pool1d", "padding")[0]],
                   return_mask, ceil_mode)
    return _C.squeeze(y, 2)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
    k = _n(kernel_size, 1, "avg_pool1d", "kernel_size")[0]
    s = k if stride is None else _n(stride, 1, "avg_pool1d", "stride")[0]
    y = avg_pool2d(_C.unsqueeze(x, 2), [1, k], [1, s], [0, _n(padding, 1, "avg_pool1d", "padding")[0]],
                   ceil_mode, exclusive)
    return _C.squeeze(y, 2)


def adaptive_avg_pool1d(x, output_size, name=None):
    """x [N, C, L] -> [N, C, output_size] (Paddle's bins: [floor(i L / o), ceil((i + 1) L / o)))."""
    y = _f.adaptive_avg_pool2d(_C.unsqueeze(x, 2), [1, int(output_size)])
    return _C.squeeze(y, 2)


# ---- shapes ----
def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """[N, C r^2, H, W] -> [N, C, H r, W r]."""
    _format("pixel_shuffle", data_format, ("NCHW",))
    r = int(upscale_factor)
    n, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: channels {c} are not divisible by upscale_factor^2 = {r * r}")
    y = _C.reshape(x, [n, c // (r * r), r, r, h, w])
    y = _C.transpose(y, [0, 1, 4, 2, 5, 3])
    return _C.reshape(y, [n, c // (r * r), h * r, w * r])


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """im2col: x [N, C, H, W] -> [N, C kh kw, L], row c kh kw + i kw + j holding tap (i, j) of
    channel c. Runs as one grouped oneDNN convolution with a 0/1 selection weight (its gradient
    is that convolution's backward)."""
    if x.ndim != 4:
        raise ValueError(f"unfold: expected 4-D NCHW input, got shape {list(x.shape)}")
    kh, kw = _n(kernel_sizes, 2, "unfold", "kernel_sizes")
    s, d = _n(strides, 2, "unfold", "strides"), _n(dilations, 2, "unfold", "dilations")
    if isinstance(paddings, (int, np.integer)):
        pads = [int(paddings)] * 4
    else:
        pads = [int(a) for a in paddings]
        pads = pads * 2 if len(pads) == 2 else pads
        if len(pads) != 4:
            raise ValueError(f"unfold: paddings must be an int, 2 or 4 ints, got {list(paddings)}")
    top, left, bottom, right = pads
    n, c = x.shape[0], x.shape[1]
    sel = np.zeros((c * kh * kw, 1, kh, kw))
    for t in range(kh * kw):
        sel[t::kh * kw, 0, t // kw, t % kw] = 1.0
    if top == bottom and left == right:
        p = [top, left]
    else:
        x, p = _pad_hw(x, [top, bottom, left, right]), [0, 0]
    y = _f.conv2d(x, _const(sel, x), None, s, p, d, c)
    return _C.reshape(y, [n, c * kh * kw, y.shape[2] * y.shape[3]])


def one_hot(x, num_classes, name=None):
    """int labels [...] -> float32 [..., num_classes] (no gradient)."""
    lab = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if lab.dtype.kind not in "iu":
        raise TypeError(f"one_hot: x must be an integer tensor, got {lab.dtype}")
    if lab.size and (lab.min() < 0 or lab.max() >= num_classes):
        bad = lab[(lab < 0) | (lab >= num_classes)].flat[0]
        raise IndexError(f"one_hot: label {int(bad)} is outside [0, {num_classes})")
    return _C.to_tensor(np.eye(int(num_classes), dtype=np.float32)[lab])


# ---- resizing ----
def _resize_size(op, x, size, scale_factor):
    h, w = x.shape[2], x.shape[3]
    if size is not None:
        oh, ow = _n(size, 2, op, "size")
        return oh, ow, None
    if scale_factor is None:
        raise ValueError(f"{op}: give size or scale_factor")
    sh, sw = (scale_factor, scale_factor) if np.isscalar(scale_factor) else [float(s) for s in scale_factor]
    return int(h * sh), int(w * sw), (float(sh), float(sw))


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0,
                data_format="NCHW", name=None):
    """x [N, C, H, W] -> [N, C, oh, ow], Paddle's index rules. float32 nearest with integer
    upscales and bilinear with align_corners=False, align_mode=0 run oneDNN resampling (its
    rules are Paddle's there); every other case (align_corners=True, align_mode=1, nearest
    downsampling or fractional ratios, float64) runs as two matmuls with resize matrices."""
    from .composed_functional import interpolate as _by_matrices
    _format("interpolate", data_format, ("NCHW",))
    mode = str(mode).lower()
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"interpolate: mode '{mode}' is not supported (nearest, bilinear)")
    if x.ndim != 4:
        raise ValueError(f"interpolate: expected 4-D NCHW input, got shape {list(x.shape)}")
    oh, ow, scale = _resize_size("interpolate", x, size, scale_factor)
    h, w = x.shape[2], x.shape[3]
    # oneDNN's ratio is in / out; Paddle's is 1 / scale_factor when one is given.
    same_ratio = scale is None or (abs(h * scale[0] - oh) < 1e-9 and abs(w * scale[1] - ow) < 1e-9)
    fast = x.dtype == _C.dtype.float32 and not align_corners and same_ratio and oh >= 1 and ow >= 1
    if fast and mode == "nearest" and oh % h == 0 and ow % w == 0:
        return _f.resample2d(x, [oh, ow], False)
    if fast and mode == "bilinear" and align_mode == 0:
        return _f.resample2d(x, [oh, ow], True)
    return _by_matrices(x, size, scale_factor, mode, align_corners, align_mode, data_format)


upsample = interpolate



__all__ = ["conv2d", "conv1d", "conv2d_transpose", "conv1d_transpose", "max_pool2d", "avg_pool2d", "max_pool1d",
           "avg_pool1d", "adaptive_avg_pool1d", "interpolate", "upsample", "pixel_shuffle", "unfold", "one_hot"]
