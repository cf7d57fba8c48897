"""More of Paddle 2.4's paddle.nn.functional: dropout, batch/group/instance/local-response
normalisation, the parametrised activations (C++, oneDNN eltwise where it has them), and the
distances and losses. The computing ops run in C++ (crew._C.nn.functional); this module maps
Paddle's arguments onto them. The losses and distances are short compositions of
differentiable C++ ops, as in Paddle's own Python. Convolutions, pools and resizing are in
functional_conv.py (re-exported here)."""
import math

import numpy as np

from .. import _C
from .composed_functional import _pad_axis, _scale_shift
from .functional_conv import (_const, _format, adaptive_avg_pool1d, avg_pool1d, avg_pool2d,  # noqa: F401
                              conv1d, conv1d_transpose, conv2d, conv2d_transpose, interpolate, max_pool1d,
                              max_pool2d, one_hot, pixel_shuffle, unfold, upsample)

_f = _C.nn.functional


# ---- dropout, normalisation ----
def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', got '{mode}'")
    if axis is None and mode == "upscale_in_train":
        return _f.dropout(x, float(p), bool(training))
    if not training:
        return x * (1.0 - p) if mode == "downscale_in_infer" else x
    axes = [axis] if isinstance(axis, int) else (range(x.ndim) if axis is None else axis)
    shape = [x.shape[i] if (i in axes or i - x.ndim in axes) else 1 for i in range(x.ndim)]
    keep = (np.random.uniform(size=shape) >= p).astype(np.float64)
    if mode == "upscale_in_train":
        keep = keep / (1.0 - p) if p < 1.0 else keep * 0.0
    return x * _const(keep, x)


def alpha_dropout(x, p=0.5, training=True, name=None):
    """Keeps SELU's self-normalisation: dropped entries become -scale * alpha, then the affine
    map a y + b restores mean 0 and variance 1 (Paddle's formula)."""
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"alpha_dropout: p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    keep = (np.random.uniform(size=x.shape) >= p).astype(np.float64)
    return (x * _const(keep * a, x)) + _const((1 - keep) * alpha_p * a + b, x)


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.9, epsilon=1e-05,
               data_format="NCHW", use_global_stats=None, name=None):
    """x [N, C, ...] channels first (NC, NCL, NCHW, NCDHW); training updates running_mean and
    running_var in place (running = momentum running + (1 - momentum) batch)."""
    _format("batch_norm", data_format, ("NC", "NCL", "NCHW", "NCDHW"))
    use_batch = training if use_global_stats is None else not use_global_stats
    return _f.batch_norm(x, running_mean, running_var, weight, bias, bool(use_batch), float(momentum),
                         float(epsilon))


def local_response_norm(x, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None):
    """x / (k + alpha / size * sum of x^2 over the channels c - size//2 .. c + (size-1)//2)^beta.
    Odd sizes in float32 run oneDNN's lrn (its window is then Paddle's); even sizes and
    float64 add up `size` shifted slices of the zero-padded squares."""
    _format("local_response_norm", data_format, ("NCL", "NCHW", "NCDHW"))
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3-D or more input, got shape {list(x.shape)}")
    n, c = x.shape[0], x.shape[1]
    rest = int(np.prod(x.shape[2:]))
    if int(size) % 2 == 1 and x.dtype == _C.dtype.float32:  # oneDNN's window is Paddle's
        y = _f.local_response_norm(_C.reshape(x, [n, c, rest, 1]), int(size), float(alpha), float(beta), float(k))
        return _C.reshape(y, list(x.shape))
    sq = _pad_axis(_C.reshape(x * x, [n, c, rest]), 1, size // 2, (size - 1) // 2, "constant", 0.0)
    window = _C.slice(sq, [1], [0], [c])
    for j in range(1, int(size)):
        window = window + _C.slice(sq, [1], [j], [j + c])
    div = _C.pow(_C.reshape(window, list(x.shape)) * (float(alpha) / size) + float(k), float(beta))
    return x / div


# ---- activations (C++; oneDNN eltwise for elu, swish, mish, hardtanh) ----
def elu(x, alpha=1.0, name=None):
    return _f.elu(x, float(alpha))


def selu(x, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717, name=None):
    if scale <= 1.0 or alpha < 0:
        raise ValueError(f"selu: scale must be > 1 and alpha >= 0, got scale={scale}, alpha={alpha}")
    return _f.selu(x, float(scale), float(alpha))


def swish(x, name=None):
    return _f.swish(x)


def mish(x, name=None):
    return _f.mish(x)


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    return _f.hardsigmoid(x, float(slope), float(offset))


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002 (Paddle's names)
    return _f.hardtanh(x, float(min), float(max))


def softsign(x, name=None):
    return _f.softsign(x)


def tanhshrink(x, name=None):
    return _f.tanhshrink(x)


def log_softmax(x, axis=-1, dtype=None, name=None):
    if dtype is not None:
        x = x.astype(dtype)
    return _f.log_softmax(x, int(axis))


# ---- distances and losses ----
def _abs(x):
    return _f.relu(x) + _f.relu(-x)


def _reduce(loss, reduction, op):
    if reduction == "mean":
        return _C.mean(loss)
    if reduction == "sum":
        return _C.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction='{reduction}': expected 'mean', 'sum' or 'none'")


def normalize(x, p=2, axis=1, epsilon=1e-12, name=None):
    """x / max(||x||_p along axis, epsilon)."""
    p = float(p)
    if p <= 0:
        raise ValueError(f"normalize: p must be positive, got {p}")
    mag = x * x if p == 2.0 else _C.pow(_abs(x), p)
    norm = _C.pow(_C.sum(mag, axis, True), 1.0 / p)
    return x / (_f.relu(norm - float(epsilon)) + float(epsilon))


def cosine_similarity(x1, x2, axis=1, eps=1e-8, name=None):
    """sum(x1 x2) / sqrt(max(sum(x1^2) sum(x2^2), eps^2)) along axis (Paddle's formula)."""
    w12 = _C.sum(x1 * x2, axis)
    w1, w2 = _C.sum(x1 * x1, axis), _C.sum(x2 * x2, axis)
    floor = float(eps) * float(eps)
    return w12 / _C.pow(_f.relu(w1 * w2 - floor) + floor, 0.5)


def pairwise_distance(x, y, p=2.0, epsilon=1e-6, keepdim=False, name=None):
    """||x - y + epsilon||_p over the last axis."""
    diff = _abs(x - y + float(epsilon))
    p = float(p)
    if p == 0:
        return _C.sum(_C.to_tensor((diff.numpy() != 0).astype(np.float32)), -1, keepdim)
    if math.isinf(p):
        return (diff.max if p > 0 else diff.min)(-1, keepdim)
    return _C.pow(_C.sum(_C.pow(diff, p), -1, keepdim), 1.0 / p)


def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean", name=None):
    """relu(-label (input - other) + margin), reduced."""
    return _reduce(_f.relu((other - input) * label + float(margin)), reduction, "margin_ranking_loss")


def square_error_cost(input, label):
    d = input - label
    return d * d


def log_loss(input, label, epsilon=0.0001, name=None):
    """-label log(input + eps) - (1 - label) log(1 - input + eps), elementwise."""
    eps = float(epsilon)
    return -(label * _C.log(input + eps)) - (1.0 - label) * _C.log(1.0 - input + eps)


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """(1 - epsilon) label + epsilon prior (uniform 1 / num_classes without prior_dist)."""
    eps = float(epsilon)
    if prior_dist is None:
        return label * (1.0 - eps) + eps / label.shape[-1]
    return label * (1.0 - eps) + prior_dist * eps


def sigmoid_focal_loss(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum", name=None):
    """alpha_t (1 - p_t)^gamma BCE-with-logits (Paddle's formula), / normalizer, reduced."""
    from .loss_functional import binary_cross_entropy_with_logits
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"sigmoid_focal_loss: reduction='{reduction}': expected 'mean', 'sum' or 'none'")
    pred = _f.sigmoid(logit)
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    p_t = pred * label + (1.0 - pred) * (1.0 - label)
    alpha_t = label * float(alpha) + (1.0 - label) * (1.0 - float(alpha))
    loss = alpha_t * loss
    if gamma != 0:
        loss = _C.pow(1.0 - p_t, float(gamma)) * loss
    if normalizer is not None:
        loss = loss / normalizer
    return _reduce(loss, reduction, "sigmoid_focal_loss")


def softmax_with_cross_entropy(logits, label, soft_label=False, ignore_index=-100, numeric_stable_mode=True,
                               return_softmax=False, axis=-1):
    """Per-row loss keeping `axis` with size 1 (Paddle's shape), and the softmax if asked."""
    from .loss_functional import cross_entropy
    loss = cross_entropy(logits, label, ignore_index=ignore_index, reduction="none", soft_label=soft_label,
                         axis=axis)
    ax = axis % logits.ndim
    if loss.ndim < logits.ndim:
        loss = _C.unsqueeze(loss, ax)
    if return_softmax:
        return loss, _f.softmax(logits, axis)
    return loss




# ---- group and instance normalisation on the batch-norm kernel ----
def _normalize_groups(x, groups, epsilon):
    """Each of the N * groups rows of x viewed as [1, N * groups, rest] normalised over its
    own elements (biased variance): the batch-norm kernel in training mode, one "channel" per
    row, so forward and backward are one oneDNN batch_normalization pass each in float32."""
    shape = list(x.shape)
    rows = shape[0] * groups
    flat = _C.reshape(x, [1, rows, -1])
    zeros = np.zeros(rows, dtype=np.float64 if x.dtype == _C.dtype.float64 else np.float32)
    y = _f.batch_norm(flat, _C.to_tensor(zeros), _C.to_tensor(zeros + 1), None, None, True, 0.9, float(epsilon))
    return _C.reshape(y, shape)


def group_norm(x, num_groups, epsilon=1e-05, weight=None, bias=None, data_format="NCHW", name=None):
    """x [N, C, *] normalised over each group of C / num_groups channels; weight, bias [C]."""
    _format("group_norm", data_format, ("NCHW", "NCL", "NCDHW"))
    if x.ndim < 2 or x.shape[1] % int(num_groups):
        raise ValueError(f"group_norm: channels of shape {list(x.shape)} are not divisible by num_groups "
                         f"{num_groups}")
    return _scale_shift(_normalize_groups(x, int(num_groups), epsilon), weight, bias)


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.9, eps=1e-05, data_format="NCHW", name=None):
    """Each channel of each sample normalised over its own elements; weight, bias [C]."""
    _format("instance_norm", data_format, ("NCHW", "NCL", "NCDHW"))
    if not use_input_stats:
        raise ValueError("instance_norm: use_input_stats=False is not supported by crew")
    return _scale_shift(_normalize_groups(x, x.shape[1], eps), weight, bias)


__all__ = ["conv2d", "conv1d", "conv2d_transpose", "conv1d_transpose", "max_pool2d", "avg_pool2d", "max_pool1d",
           "avg_pool1d", "adaptive_avg_pool1d", "interpolate", "upsample", "pixel_shuffle", "unfold", "dropout",
           "alpha_dropout", "batch_norm", "group_norm", "instance_norm", "local_response_norm", "elu", "selu",
           "swish", "mish", "hardsigmoid", "hardtanh", "softsign", "tanhshrink", "log_softmax", "one_hot",
           "normalize", "cosine_similarity", "pairwise_distance", "margin_ranking_loss", "square_error_cost",
           "log_loss", "label_smooth", "sigmoid_focal_loss", "softmax_with_cross_entropy"]
