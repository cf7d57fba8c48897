"""Layers composed in Python from crew's differentiable ops (gradients come from the ops):
activations (ReLU6, LeakyReLU, Hardswish, Silu, Softplus, PReLU), Identity, Dropout2D,
GroupNorm, InstanceNorm2D, Pad2D, Upsample, AdaptiveMaxPool2D, AvgPool1D/MaxPool1D.
The functional forms are in composed_functional.py (crew.nn.functional re-exports them).
"""
from . import composed_functional as F
from .initializer import Constant
from .layer import Layer
from ..default_dtype import norm_dtype


class Identity(Layer):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class _Act(Layer):
    _fn = None

    def __init__(self, name=None, **kwargs):
        super().__init__()
        self._kwargs = kwargs

    def forward(self, x):
        return type(self)._fn(x, **self._kwargs)


class ReLU6(_Act):
    _fn = staticmethod(F.relu6)


class Silu(_Act):
    _fn = staticmethod(F.silu)


class Hardswish(_Act):
    _fn = staticmethod(F.hardswish)


class LeakyReLU(_Act):
    _fn = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__(negative_slope=negative_slope)


class Softplus(_Act):
    _fn = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__(beta=beta, threshold=threshold)


class PReLU(Layer):
    """weight [num_parameters] (1, or the channel count), initialised to `init`."""

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, data_format="NCHW", name=None):
        super().__init__()
        if data_format not in ("NC", "NCL", "NCHW", "NCDHW"):
            raise ValueError(f"PReLU: data_format='{data_format}': crew supports channels first")
        self.weight = self.create_parameter([num_parameters], attr=weight_attr,
                                            default_initializer=Constant(init))

    def forward(self, x):
        return F.prelu(x, self.weight)


class Dropout2D(Layer):
    """Zeroes whole channels of x [N, C, H, W] with probability p in training (kept ones
    scaled by 1/(1-p)); the identity in eval. Masks come from NumPy's generator."""

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"Dropout2D: data_format='{data_format}': crew supports 'NCHW'")
        self.p = float(p)

    def forward(self, x):
        return F.dropout2d(x, self.p, self.training)


class _Norm(Layer):
    def _affine(self, channels, weight_attr, bias_attr, weight_name):
        if weight_attr is not False:
            setattr(self, weight_name, self.create_parameter([channels], attr=weight_attr, dtype=norm_dtype(),
                                                             default_initializer=Constant(1.0)))
        if bias_attr is not False:
            self.bias = self.create_parameter([channels], attr=bias_attr, dtype=norm_dtype(), is_bias=True)


class GroupNorm(_Norm):
    """Normalises x [N, C, *] over each of num_groups channel groups; weight, bias [C]."""

    def __init__(self, num_groups, num_channels, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        if data_format != "NCHW":
            raise ValueError(f"GroupNorm: data_format='{data_format}': crew supports 'NCHW'")
        self._groups, self._epsilon = num_groups, epsilon
        self._affine(num_channels, weight_attr, bias_attr, "weight")

    def forward(self, x):
        return F.group_norm(x, self._groups, self._epsilon, self._parameters.get("weight"),
                            self._parameters.get("bias"))


class InstanceNorm2D(_Norm):
    """Normalises each channel of each sample of x [N, C, H, W]; Paddle's parameters
    `scale` and `bias` [C] (weight_attr/bias_attr=False: none)."""

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"InstanceNorm2D: data_format='{data_format}': crew supports 'NCHW'")
        self._epsilon = epsilon
        self._affine(num_features, weight_attr, bias_attr, "scale")

    def forward(self, x):
        return F.instance_norm(x, self._epsilon, self._parameters.get("scale"),
                               self._parameters.get("bias"))


class Pad2D(Layer):
    """padding: an int or [left, right, top, bottom]; mode 'constant', 'reflect' or 'replicate'."""

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCHW", name=None):
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"Pad2D: data_format='{data_format}': crew supports 'NCHW'")
        self._padding = [padding] * 4 if isinstance(padding, int) else list(padding)
        if len(self._padding) != 4:
            raise ValueError(f"Pad2D: padding must be an int or 4 ints, got {padding}")
        self._mode, self._value = mode, value

    def forward(self, x):
        return F.pad2d(x, self._padding, self._mode, self._value)


class ZeroPad2D(Pad2D):
    """Paddle's ZeroPad2D: Pad2D with zeros; padding an int or [left, right, top, bottom]."""

    def __init__(self, padding, data_format="NCHW", name=None):
        super().__init__(padding, "constant", 0.0, data_format)


class Upsample(Layer):
    """x [N, C, H, W] resized to `size` or by `scale_factor`; mode 'nearest' or 'bilinear'
    (Paddle's align_corners and align_mode)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=False,
                 align_mode=0, data_format="NCHW", name=None):
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"Upsample: data_format='{data_format}': crew supports 'NCHW'")
        self._args = (size, scale_factor, mode, align_corners, align_mode)

    def forward(self, x):
        # oneDNN resampling where its rules are Paddle's, resize matrices otherwise.
        from .functional_extra import interpolate
        return interpolate(x, *self._args)


class UpsamplingNearest2D(Upsample):
    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format)


class UpsamplingBilinear2D(Upsample):
    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format)


class AdaptiveMaxPool2D(Layer):
    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__()
        if return_mask:
            raise ValueError("AdaptiveMaxPool2D: return_mask=True is not supported")
        self._size = output_size

    def forward(self, x):
        return F.adaptive_max_pool2d(x, self._size)


class MaxPool1D(Layer):
    """x [N, C, L] -> [N, C, L']: MaxPool2D over a [1, kernel_size] window."""

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
        super().__init__()
        if return_mask or ceil_mode:
            raise ValueError("MaxPool1D: return_mask and ceil_mode are not supported")
        self._args = (kernel_size, stride, padding)

    def forward(self, x):
        return F.max_pool1d(x, *self._args)


class AvgPool1D(Layer):
    """x [N, C, L] -> [N, C, L']: AvgPool2D over a [1, kernel_size] window (padding=0 only,
    where exclusive makes no difference)."""

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
        super().__init__()
        if padding or ceil_mode:
            raise ValueError("AvgPool1D: padding and ceil_mode are not supported")
        self._args = (kernel_size, stride)

    def forward(self, x):
        return F.avg_pool1d(x, *self._args)
