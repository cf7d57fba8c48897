"""Functions composed from crew's differentiable ops (their gradients are the ops'):
relu6 (hardtanh's kernel), leaky_relu, hardswish, silu, softplus, prelu, dropout2d, group_norm, instance_norm,
pad, interpolate, adaptive_max_pool2d, max_pool1d, avg_pool1d. Shapes are NCHW / NCL."""
import math

import numpy as np

from .. import _C

_f = _C.nn.functional


def _const(value, like):
    return _C.to_tensor(np.asarray(value, dtype=np.float32 if like.dtype == _C.dtype.float32 else np.float64))


def relu6(x, name=None):
    """min(max(x, 0), 6): one oneDNN clip (hardtanh), which keeps a conv's blocked layout;
    gradient 1 strictly inside (0, 6), as Paddle's."""
    return _f.hardtanh(x, 0.0, 6.0)


def leaky_relu(x, negative_slope=0.01, name=None):
    return _f.relu(x) - _f.relu(-x) * float(negative_slope)


def hardswish(x, name=None):
    return x * relu6(x + 3.0) * (1.0 / 6.0)


def silu(x, name=None):
    return x * _f.sigmoid(x)


swish = silu


def softplus(x, beta=1, threshold=20, name=None):
    """log(1 + exp(beta x)) / beta, computed as relu(bx) + log(1 + exp(-|bx|)) (no overflow;
    past Paddle's threshold the second term is below float32's resolution of bx)."""
    bx = x * float(beta)
    absx = _f.relu(bx) + _f.relu(-bx)
    return (_f.relu(bx) + _C.log(_C.exp(-absx) + 1.0)) * (1.0 / float(beta))


def prelu(x, weight, data_format="NCHW", name=None):
    w = weight
    if weight.shape[0] != 1:
        w = _C.reshape(weight, [1, weight.shape[0]] + [1] * (x.ndim - 2))
    return _f.relu(x) - _f.relu(-x) * w


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    if not training or p == 0.0:
        return x
    if p >= 1.0:
        return x * 0.0
    n, c = x.shape[0], x.shape[1]
    keep = (np.random.uniform(size=(n, c) + (1,) * (x.ndim - 2)) >= p) / (1.0 - p)
    return x * _const(keep, x)


def _normalize(x, groups, epsilon):
    shape = list(x.shape)
    g = _C.reshape(x, [shape[0], groups, -1])
    centred = g - _C.mean(g, axis=2, keepdim=True)
    var = _C.mean(centred * centred, axis=2, keepdim=True)
    return _C.reshape(centred * _C.pow(var + float(epsilon), -0.5), shape)


def _scale_shift(y, weight, bias):
    ones = [1] * (y.ndim - 2)
    if weight is not None:
        y = y * _C.reshape(weight, [1, weight.shape[0]] + ones)
    if bias is not None:
        y = y + _C.reshape(bias, [1, bias.shape[0]] + ones)
    return y


def group_norm(x, num_groups, epsilon=1e-05, weight=None, bias=None, data_format="NCHW", name=None):
    return _scale_shift(_normalize(x, num_groups, epsilon), weight, bias)


def instance_norm(x, eps=1e-05, weight=None, bias=None, name=None, **unused):
    return _scale_shift(_normalize(x, x.shape[1], eps), weight, bias)


def _edge(x, axis, idx):
    return _C.slice(x, [axis], [idx], [idx + 1])


def _pad_axis(x, axis, before, after, mode, value):
    n = x.shape[axis]
    if mode == "constant":
        parts = []
        for count in (before, after):
            shape = list(x.shape)
            shape[axis] = count
            parts.append(_const(np.full(shape, value), x) if count else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        return _C.concat(pieces, axis) if len(pieces) > 1 else x
    if mode == "replicate":
        lo, hi = [0] * before, [n - 1] * after
    elif mode == "reflect":
        if before >= n or after >= n:
            raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller than the size {n}")
        lo, hi = list(range(before, 0, -1)), [n - 2 - i for i in range(after)]
    else:
        raise ValueError(f"pad: mode '{mode}' is not supported (constant, reflect, replicate)")
    pieces = [_edge(x, axis, i) for i in lo] + [x] + [_edge(x, axis, i) for i in hi]
    return _C.concat(pieces, axis) if len(pieces) > 1 else x


def pad2d(x, padding, mode="constant", value=0.0):
    left, right, top, bottom = padding
    x = _pad_axis(x, 3, left, right, mode, value)
    return _pad_axis(x, 2, top, bottom, mode, value)


def pad(x, pad, mode="constant", value=0.0, data_format="NCHW", name=None):
    """Paddle's F.pad for 4-D NCHW input with pad = [left, right, top, bottom]."""
    if x.ndim != 4 or len(pad) != 4:
        raise ValueError(f"pad: crew pads 4-D NCHW tensors with 4 values, got {x.ndim}-D and {list(pad)}")
    return pad2d(x, list(pad), mode, value)


def _resize_matrix(n_in, n_out, mode, align_corners, align_mode, scale):
    """[n_out, n_in]: row i mixes the input rows output i reads (Paddle's index rules)."""
    m = np.zeros((n_out, n_in))
    ratio = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else (
        1.0 / scale if scale else n_in / n_out)
    for i in range(n_out):
        if mode == "nearest":
            j = int(round(i * ratio)) if align_corners else int(math.floor(i * ratio))
            m[i, min(j, n_in - 1)] = 1.0
            continue
        src = i * ratio if (align_corners or align_mode == 1) else max((i + 0.5) * ratio - 0.5, 0.0)
        j0 = min(int(math.floor(src)), n_in - 1)
        j1 = min(j0 + 1, n_in - 1)
        lam = src - j0
        m[i, j0] += 1.0 - lam
        m[i, j1] += lam
    return m


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0,
                data_format="NCHW", name=None):
    """x [N, C, H, W] -> [N, C, oh, ow] as two matmuls with resize matrices (exact for
    nearest and bilinear; gradients flow through the matmuls)."""
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"interpolate: mode '{mode}' is not supported (nearest, bilinear)")
    if mode == "nearest" and align_corners:
        raise ValueError("interpolate: align_corners=True needs a bilinear mode (Paddle's rule)")
    h, w = x.shape[2], x.shape[3]
    if size is not None:
        oh, ow = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
        sh = sw = None
    elif scale_factor is not None:
        sh, sw = (scale_factor, scale_factor) if np.isscalar(scale_factor) else scale_factor
        oh, ow = int(h * sh), int(w * sw)
    else:
        raise ValueError("interpolate: give size or scale_factor")
    mh = _const(_resize_matrix(h, oh, mode, align_corners, align_mode, sh), x)
    mw = _const(_resize_matrix(w, ow, mode, align_corners, align_mode, sw).T, x)
    return _C.matmul(mh, _C.matmul(x, mw))


upsample = interpolate


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """Paddle's bins: rows floor(i H / oh) .. ceil((i + 1) H / oh); one max pool per bin
    unless the bins tile the input evenly."""
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else output_size
    h, w = x.shape[2], x.shape[3]
    oh, ow = oh or h, ow or w
    if h % oh == 0 and w % ow == 0:
        return _C.nn.MaxPool2D([h // oh, w // ow], [h // oh, w // ow], 0)(x)
    rows = []
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        cols = []
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            cell = _C.slice(x, [2, 3], [r0, c0], [r1, c1])
            cols.append(_C.nn.MaxPool2D([r1 - r0, c1 - c0], [r1 - r0, c1 - c0], 0)(cell))
        rows.append(_C.concat(cols, 3))
    return _C.concat(rows, 2)


def _k(v):
    return int(v[0]) if isinstance(v, (list, tuple)) else int(v)


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
    k = _k(kernel_size)
    s = k if stride is None else _k(stride)
    pool = _C.nn.MaxPool2D([1, k], [1, s], [0, _k(padding)])
    return _C.squeeze(pool(_C.unsqueeze(x, 2)), 2)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
    if _k(padding):
        raise ValueError("avg_pool1d: padding is not supported")
    k = _k(kernel_size)
    s = k if stride is None else _k(stride)
    pool = _C.nn.AvgPool2D([1, k], [1, s], [0, 0])
    return _C.squeeze(pool(_C.unsqueeze(x, 2)), 2)
