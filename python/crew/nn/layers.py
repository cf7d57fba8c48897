"""The built-in layers, with Paddle's constructor arguments, each running crew's C++ layer."""
import numpy as np

from .. import _C
from ..param_attr import apply_attr
from .layer import CppLayer, Layer

_n = _C.nn


def _bias(bias_attr):
    return bias_attr is not False


def _attrs(layer, weight_attr, bias_attr, weight="weight", bias="bias"):
    """Applies Paddle's weight_attr/bias_attr to a built C++ layer's parameters."""
    params = layer._parameters
    if weight in params and weight_attr is not False:
        apply_attr(params[weight], weight_attr)
    if bias in params and bias_attr is not False:
        apply_attr(params[bias], bias_attr)
    return layer


def _fixed(layer, weight_attr, bias_attr):
    """Norm layers: weight_attr/bias_attr=False keeps the scale at 1 / the shift at 0,
    untrained (Paddle's rule for BatchNorm)."""
    for name, attr in (("weight", weight_attr), ("bias", bias_attr)):
        if attr is False:
            layer._parameters[name].stop_gradient = True
            layer._parameters[name].trainable = False
    return _attrs(layer, weight_attr, bias_attr)


class Conv2D(CppLayer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCHW"):
        if padding_mode != "zeros" or data_format != "NCHW":
            raise ValueError(f"Conv2D: padding_mode='{padding_mode}', data_format='{data_format}': "
                             "crew supports 'zeros' and 'NCHW'")
        super().__init__(_n.Conv2D(in_channels, out_channels, kernel_size, stride, padding, dilation,
                                   groups, _bias(bias_attr)))
        _attrs(self, weight_attr, bias_attr)


class Linear(CppLayer):
    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__(_n.Linear(in_features, out_features, _bias(bias_attr)))
        _attrs(self, weight_attr, bias_attr)


class MaxPool2D(CppLayer):
    """ceil_mode=True pads the bottom/right edge with the dtype's lowest value so that the
    last, partial window is kept (Paddle's output size: ceil((H + 2p - k) / s) + 1, less one
    when that window would start in the padding)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, return_mask=False,
                 data_format="NCHW", name=None):
        if return_mask or data_format != "NCHW":
            raise ValueError("MaxPool2D: crew supports return_mask=False, data_format='NCHW'")
        super().__init__(_n.MaxPool2D(kernel_size, stride, padding))
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
        k = pair(kernel_size)
        object.__setattr__(self, "_ceil", (k, pair(stride if stride is not None else k), pair(padding))
                           if ceil_mode else None)

    def forward(self, x):
        if self._ceil is not None:
            x = _ceil_pad(x, *self._ceil)
        return self._impl(x)


def _ceil_pad(x, kernel, stride, padding):
    from .composed_functional import pad2d
    extra = []
    for axis in (2, 3):
        i = axis - 2
        size, k, s, p = x.shape[axis], kernel[i], stride[i], padding[i]
        out = -(-(size + 2 * p - k) // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
        extra.append(max(0, (out - 1) * s + k - (size + 2 * p)))
    if not any(extra):
        return x
    return pad2d(x, [0, extra[1], 0, extra[0]], "constant", float(np.finfo(np.float32).min))


class AvgPool2D(CppLayer):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, name=None):
        if ceil_mode:
            raise ValueError("AvgPool2D: ceil_mode=True is not supported")
        super().__init__(_n.AvgPool2D(kernel_size, stride, padding))


class BatchNorm2D(CppLayer):
    _norm = True

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        if data_format != "NCHW":
            raise ValueError(f"BatchNorm2D: data_format='{data_format}': crew supports 'NCHW'")
        super().__init__(_n.BatchNorm2D(num_features, momentum, epsilon))
        _fixed(self, weight_attr, bias_attr)


class Dropout(CppLayer):
    """Paddle's Dropout. mode='upscale_in_train' with axis=None runs crew's C++ layer; axis
    (the axes that get their own mask entries) or mode='downscale_in_infer' (no scaling in
    training, x * (1 - p) in eval) draw the mask with NumPy and multiply."""

    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        if mode not in ("upscale_in_train", "downscale_in_infer"):
            raise ValueError(f"Dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', got '{mode}'")
        composed = axis is not None or mode != "upscale_in_train"
        super().__init__(_n.Dropout(0.0 if composed else p))
        object.__setattr__(self, "_composed", (float(p), axis, mode) if composed else None)

    def forward(self, x):
        if self._composed is None:
            return self._impl(x)
        p, axis, mode = self._composed
        if not self.training:
            return x * (1.0 - p) if mode == "downscale_in_infer" else x
        axes = [axis] if isinstance(axis, int) else (range(x.ndim) if axis is None else axis)
        shape = [x.shape[i] if (i in axes or i - x.ndim in axes) else 1 for i in range(x.ndim)]
        keep = (np.random.uniform(size=shape) >= p).astype(np.float32)
        if mode == "upscale_in_train":
            keep = keep / (1.0 - p) if p < 1.0 else keep * 0.0
        return x * _C.to_tensor(keep.astype(np.float64 if x.dtype == _C.dtype.float64 else np.float32))


class Flatten(CppLayer):
    def __init__(self, start_axis=1, stop_axis=-1):
        super().__init__(_n.Flatten(start_axis, stop_axis))


class ReLU(CppLayer):
    def __init__(self, name=None):
        super().__init__(_n.ReLU())


class Sigmoid(CppLayer):
    def __init__(self, name=None):
        super().__init__(_n.Sigmoid())


class Tanh(CppLayer):
    def __init__(self, name=None):
        super().__init__(_n.Tanh())


class GELU(CppLayer):
    def __init__(self, approximate=False, name=None):
        super().__init__(_n.GELU(approximate))


class Softmax(CppLayer):
    def __init__(self, axis=-1, name=None):
        super().__init__(_n.Softmax(axis))


class Sequential(Layer):
    """Sequential(layer, ...) or Sequential(("name", layer), ...): forward chains them."""

    def __init__(self, *layers):
        super().__init__()
        for i, item in enumerate(layers):
            if isinstance(item, (tuple, list)):
                name, layer = item
            else:
                name, layer = str(i), item
            self.add_sublayer(name, layer)

    def forward(self, x):
        for layer in self._sub_layers.values():
            x = layer(x)
        return x

    def __getitem__(self, i):
        return list(self._sub_layers.values())[i]

    def __len__(self):
        return len(self._sub_layers)


class LayerNorm(CppLayer):
    """Normalises over the last axis (normalized_shape: an int or a 1-element list); weight
    (ones) and bias (zeros) of shape [normalized_shape]. weight_attr/bias_attr=False: no such
    parameter (Paddle's rule; the C++ layer keeps it at 1 / 0, untrained and unlisted)."""
    _norm = True

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None):
        super().__init__(_n.LayerNorm(normalized_shape, epsilon))
        _attrs(self, weight_attr, bias_attr)
        for key, attr in (("weight", weight_attr), ("bias", bias_attr)):
            if attr is False:
                self._parameters.pop(key).stop_gradient = True
                self.__dict__[key] = None


class Embedding(CppLayer):
    """Looks int64 ids [...] up in weight [num_embeddings, embedding_dim] -> [..., embedding_dim];
    padding_idx (None, or an id, negative counting from the end) gives zero rows, no gradient."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, sparse=False, weight_attr=None,
                 name=None):
        if sparse:
            raise ValueError("Embedding: sparse=True is not supported (crew's gradients are dense)")
        super().__init__(_n.Embedding(num_embeddings, embedding_dim, padding_idx))
        _attrs(self, weight_attr, None)


class AdaptiveAvgPool2D(CppLayer):
    """x [N, C, H, W] -> [N, C, oh, ow] over adaptive bins; output_size an int or (oh, ow)."""

    def __init__(self, output_size, data_format="NCHW", name=None):
        if data_format != "NCHW":
            raise ValueError(f"AdaptiveAvgPool2D: data_format='{data_format}': crew supports 'NCHW'")
        super().__init__(_n.AdaptiveAvgPool2D(output_size))
