"""The built-in layers, with Paddle's constructor arguments, each running crew's C++ layer."""
from .. import _C
from .layer import CppLayer, Layer

_n = _C.nn


def _bias(bias_attr):
    return bias_attr is not False


class Conv2D(CppLayer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCHW"):
        if padding_mode != "zeros" or data_format != "NCHW":
            raise ValueError(f"Conv2D: padding_mode='{padding_mode}', data_format='{data_format}': "
                             "crew supports 'zeros' and 'NCHW'")
        super().__init__(_n.Conv2D(in_channels, out_channels, kernel_size, stride, padding, dilation,
                                   groups, _bias(bias_attr)))


class Linear(CppLayer):
    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__(_n.Linear(in_features, out_features, _bias(bias_attr)))


class MaxPool2D(CppLayer):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, name=None):
        if ceil_mode:
            raise ValueError("MaxPool2D: ceil_mode=True is not supported")
        super().__init__(_n.MaxPool2D(kernel_size, stride, padding))


class AvgPool2D(CppLayer):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, name=None):
        if ceil_mode:
            raise ValueError("AvgPool2D: ceil_mode=True is not supported")
        super().__init__(_n.AvgPool2D(kernel_size, stride, padding))


class BatchNorm2D(CppLayer):
    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        super().__init__(_n.BatchNorm2D(num_features, momentum, epsilon))


class Dropout(CppLayer):
    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        if axis is not None or mode != "upscale_in_train":
            raise ValueError("Dropout: crew supports axis=None, mode='upscale_in_train'")
        super().__init__(_n.Dropout(p))


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
    (ones) and bias (zeros) of shape [normalized_shape]."""

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None):
        if weight_attr is False or bias_attr is False:
            raise ValueError("LayerNorm: weight_attr=False / bias_attr=False are not supported")
        super().__init__(_n.LayerNorm(normalized_shape, epsilon))


class Embedding(CppLayer):
    """Looks int64 ids [...] up in weight [num_embeddings, embedding_dim] -> [..., embedding_dim];
    padding_idx (None, or an id, negative counting from the end) gives zero rows, no gradient."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, sparse=False, weight_attr=None,
                 name=None):
        if sparse:
            raise ValueError("Embedding: sparse=True is not supported (crew's gradients are dense)")
        super().__init__(_n.Embedding(num_embeddings, embedding_dim, padding_idx))


class AdaptiveAvgPool2D(CppLayer):
    """x [N, C, H, W] -> [N, C, oh, ow] over adaptive bins; output_size an int or (oh, ow)."""

    def __init__(self, output_size, data_format="NCHW", name=None):
        if data_format != "NCHW":
            raise ValueError(f"AdaptiveAvgPool2D: data_format='{data_format}': crew supports 'NCHW'")
        super().__init__(_n.AdaptiveAvgPool2D(output_size))
