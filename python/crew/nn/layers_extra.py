"""More of Paddle 2.4's paddle.nn layers: convolutions (Conv1D, Conv1DTranspose,
Conv2DTranspose on oneDNN), 1-D pools, LocalResponseNorm, the BatchNorm family beyond
BatchNorm2D, activations on crew's C++ eltwise kernels, PixelShuffle, AlphaDropout and the
distance/ranking layers. Each forwards to crew.nn.functional_extra."""
import math

from . import composed as _composed
from . import functional_extra as F
from .initializer import Constant, Normal
from .layer import Layer
from ..default_dtype import norm_dtype
from .. import _C


def _ints(v, n):
    return [int(v)] * n if isinstance(v, int) else [int(a) for a in v]


# ---- convolutions ----
class _ConvNd(Layer):
    """Paddle's _ConvNd parameters: weight Normal(0, sqrt(2 / (prod(kernel) in_channels))),
    bias zeros; bias_attr=False: no bias."""

    def _make(self, op, in_channels, out_channels, groups, weight_shape, data_format, allowed, padding_mode):
        if padding_mode != "zeros":
            raise ValueError(f"{op}: padding_mode='{padding_mode}': crew supports 'zeros'")
        if data_format != allowed:
            raise ValueError(f"{op}: data_format='{data_format}': crew supports '{allowed}' (channels first)")
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{op}: in_channels {in_channels} and out_channels {out_channels} must be divisible "
                             f"by groups {groups}")
        fan = in_channels * math.prod(weight_shape[2:])
        self.weight = self.create_parameter(weight_shape, attr=self._weight_attr,
                                            default_initializer=Normal(0.0, math.sqrt(2.0 / fan)))
        self.bias = None
        if self._bias_attr is not False:
            self.bias = self.create_parameter([out_channels], attr=self._bias_attr, is_bias=True)


class Conv1D(_ConvNd):
    """x [N, in_channels, L] -> [N, out_channels, L']; weight [out, in/groups, k]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCL"):
        super().__init__()
        self._weight_attr, self._bias_attr = weight_attr, bias_attr
        k = _ints(kernel_size, 1)[0]
        self._make("Conv1D", in_channels, out_channels, groups, [out_channels, in_channels // groups, k],
                   data_format, "NCL", padding_mode)
        self._args = (stride, padding, dilation, groups)

    def forward(self, x):
        return F.conv1d(x, self.weight, self.bias, *self._args)


class Conv2DTranspose(_ConvNd):
    """x [N, in_channels, H, W] -> [N, out_channels, H', W']; weight [in, out/groups, kh, kw]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1, weight_attr=None, bias_attr=None, data_format="NCHW"):
        super().__init__()
        self._weight_attr, self._bias_attr = weight_attr, bias_attr
        kh, kw = _ints(kernel_size, 2)
        self._make("Conv2DTranspose", in_channels, out_channels, groups,
                   [in_channels, out_channels // groups, kh, kw], data_format, "NCHW", "zeros")
        self._args = (stride, padding, output_padding, dilation, groups)

    def forward(self, x, output_size=None):
        return F.conv2d_transpose(x, self.weight, self.bias, *self._args, output_size=output_size)


class Conv1DTranspose(_ConvNd):
    """x [N, in_channels, L] -> [N, out_channels, L']; weight [in, out/groups, k]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1, weight_attr=None, bias_attr=None, data_format="NCL"):
        super().__init__()
        self._weight_attr, self._bias_attr = weight_attr, bias_attr
        k = _ints(kernel_size, 1)[0]
        self._make("Conv1DTranspose", in_channels, out_channels, groups, [in_channels, out_channels // groups, k],
                   data_format, "NCL", "zeros")
        self._args = (stride, padding, output_padding, groups, dilation)

    def forward(self, x, output_size=None):
        return F.conv1d_transpose(x, self.weight, self.bias, *self._args, output_size=output_size)


# ---- pools ----
class MaxPool1D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
        super().__init__()
        self._args = (kernel_size, stride, padding, return_mask, ceil_mode)

    def forward(self, x):
        return F.max_pool1d(x, *self._args)


class AvgPool1D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
        super().__init__()
        self._args = (kernel_size, stride, padding, exclusive, ceil_mode)

    def forward(self, x):
        return F.avg_pool1d(x, *self._args)


class AdaptiveAvgPool1D(Layer):
    def __init__(self, output_size, name=None):
        super().__init__()
        self._size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool1d(x, self._size)


# ---- normalisation ----
class _BatchNormBase(Layer):
    """weight, bias [C] (trainable; weight_attr/bias_attr=False: fixed at 1 / 0) and the
    buffers _mean, _variance (Paddle's state_dict keys); the C++ batch_norm kernel."""
    _formats = ("NCHW",)
    _ranks = (4,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format=None, use_global_stats=None, name=None):
        super().__init__()
        data_format = data_format or self._formats[0]
        if data_format not in self._formats:
            raise ValueError(f"{type(self).__name__}: data_format='{data_format}': crew supports "
                             f"{' or '.join(map(repr, self._formats))} (channels first)")
        self._momentum, self._epsilon, self._global = float(momentum), float(epsilon), use_global_stats
        self._num = int(num_features)
        for pname, attr, value in (("weight", weight_attr, 1.0), ("bias", bias_attr, 0.0)):
            p = self.create_parameter([self._num], attr=None if attr is False else attr, dtype=norm_dtype(),
                                      default_initializer=Constant(value))
            if attr is False:
                p.stop_gradient = True
                p.trainable = False
            setattr(self, pname, p)
        self.register_buffer("_mean", _C.to_tensor([0.0] * self._num, dtype=norm_dtype()))
        self._mean.stop_gradient = True
        self.register_buffer("_variance", _C.to_tensor([1.0] * self._num, dtype=norm_dtype()))
        self._variance.stop_gradient = True

    def forward(self, x):
        if x.ndim not in self._ranks or x.shape[1] != self._num:
            raise ValueError(f"{type(self).__name__}: expected input of rank {' or '.join(map(str, self._ranks))} "
                             f"with {self._num} channels at axis 1, got shape {list(x.shape)}")
        return F.batch_norm(x, self._mean, self._variance, self.weight, self.bias, self.training, self._momentum,
                            self._epsilon, use_global_stats=self._global)


class BatchNorm1D(_BatchNormBase):
    """x [N, C] or [N, C, L]."""
    _formats = ("NCL", "NC")
    _ranks = (2, 3)


class BatchNorm3D(_BatchNormBase):
    """x [N, C, D, H, W]."""
    _formats = ("NCDHW",)
    _ranks = (5,)


class BatchNorm(_BatchNormBase):
    """Paddle's fluid-style BatchNorm(num_channels, act=None, is_test=False, ...): any
    channels-first input of rank 2 to 5; `act` is applied to the result."""
    _formats = ("NCHW",)
    _ranks = (2, 3, 4, 5)

    def __init__(self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None,
                 bias_attr=None, dtype="float32", data_layout="NCHW", in_place=False, moving_mean_name=None,
                 moving_variance_name=None, do_model_average_for_mean_and_var=True, use_global_stats=False,
                 trainable_statistics=False):
        if dtype not in ("float32", _C.dtype.float32):
            raise ValueError(f"BatchNorm: dtype={dtype!r}: crew supports float32")
        super().__init__(num_channels, momentum, epsilon, param_attr, bias_attr, data_layout,
                         True if (use_global_stats or is_test) else None)
        if act is not None and act not in _ACTS:
            raise ValueError(f"BatchNorm: act='{act}': expected one of {sorted(_ACTS)} or None")
        self._act = act

    def forward(self, x):
        y = super().forward(x)
        return y if self._act is None else _ACTS[self._act](y)


_ACTS = {"relu": _C.nn.functional.relu, "sigmoid": _C.nn.functional.sigmoid, "tanh": _C.nn.functional.tanh,
         "elu": F.elu, "swish": F.swish, "mish": F.mish, "hardsigmoid": F.hardsigmoid, "softsign": F.softsign}


class GroupNorm(_composed.GroupNorm):
    """Paddle's GroupNorm (weight, bias [C]) on the batch-norm kernel (functional_extra)."""

    def forward(self, x):
        return F.group_norm(x, self._groups, self._epsilon, self._parameters.get("weight"),
                            self._parameters.get("bias"))


class InstanceNorm2D(_composed.InstanceNorm2D):
    """Paddle's InstanceNorm2D (scale, bias [C]) on the batch-norm kernel (functional_extra)."""

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"InstanceNorm2D: expected 4-D NCHW input, got shape {list(x.shape)}")
        return F.instance_norm(x, weight=self._parameters.get("scale"), bias=self._parameters.get("bias"),
                               eps=self._epsilon)


class LocalResponseNorm(Layer):
    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None):
        super().__init__()
        self._args = (size, alpha, beta, k, data_format)

    def forward(self, x):
        return F.local_response_norm(x, *self._args)


# ---- activations ----
class _Act(Layer):
    def __init__(self, *args):
        super().__init__()
        self._args = args

    def forward(self, x):
        return type(self)._fn(x, *self._args)


class ELU(_Act):
    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(alpha)


class SELU(_Act):
    _fn = staticmethod(F.selu)

    def __init__(self, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717,
                 name=None):
        super().__init__(scale, alpha)


class Hardtanh(_Act):
    _fn = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002
        super().__init__(min, max)


class LogSoftmax(_Act):
    _fn = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(axis)


class _Plain(_Act):
    def __init__(self, name=None):
        super().__init__()


class Swish(_Plain):
    _fn = staticmethod(F.swish)


class Mish(_Plain):
    _fn = staticmethod(F.mish)


class Hardsigmoid(_Plain):
    _fn = staticmethod(F.hardsigmoid)


class Softsign(_Plain):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    _fn = staticmethod(F.tanhshrink)


# ---- shapes, dropout, distances ----
class PixelShuffle(Layer):
    def __init__(self, upscale_factor, data_format="NCHW", name=None):
        super().__init__()
        self._args = (upscale_factor, data_format)

    def forward(self, x):
        return F.pixel_shuffle(x, *self._args)


class AlphaDropout(Layer):
    def __init__(self, p=0.5, name=None):
        super().__init__()
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"AlphaDropout: p must be in [0, 1], got {p}")
        self.p = float(p)

    def forward(self, x):
        return F.alpha_dropout(x, self.p, self.training)


class Unfold(Layer):
    """Paddle's nn.Unfold: F.unfold (im2col) with the sizes given at construction."""

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self._args = (kernel_sizes, strides, paddings, dilations)

    def forward(self, x):
        return F.unfold(x, *self._args)


class MarginRankingLoss(Layer):
    def __init__(self, margin=0.0, reduction="mean", name=None):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"MarginRankingLoss: reduction='{reduction}': expected 'mean', 'sum' or 'none'")
        self._args = (margin, reduction)

    def forward(self, input, other, label):
        return F.margin_ranking_loss(input, other, label, *self._args)


class CosineSimilarity(Layer):
    def __init__(self, axis=1, eps=1e-8):
        super().__init__()
        self._args = (axis, eps)

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, *self._args)


class PairwiseDistance(Layer):
    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None):
        super().__init__()
        self._args = (p, epsilon, keepdim)

    def forward(self, x, y):
        return F.pairwise_distance(x, y, *self._args)


__all__ = ["Conv1D", "Conv1DTranspose", "Conv2DTranspose", "MaxPool1D", "AvgPool1D", "AdaptiveAvgPool1D",
           "BatchNorm", "BatchNorm1D", "BatchNorm3D", "GroupNorm", "InstanceNorm2D", "Upsample",
           "UpsamplingNearest2D", "UpsamplingBilinear2D", "LocalResponseNorm", "ELU", "SELU", "Swish", "Mish",
           "Hardsigmoid", "Hardtanh", "Softsign", "Tanhshrink", "LogSoftmax", "PixelShuffle", "AlphaDropout",
           "MarginRankingLoss", "CosineSimilarity", "PairwiseDistance", "Unfold"]
