"""Paddle's AlexNet (alexnet.py layout: _conv1.._conv5, _fc6.._fc8; Uniform(-stdv, stdv)
initialisation with stdv = 1 / sqrt(fan_in)); x [N, 3, 224, 224] -> [N, num_classes]."""
import math

from ... import nn
from ...nn.initializer import Uniform
from ...param_attr import ParamAttr


def _uniform(stdv):
    return ParamAttr(initializer=Uniform(-stdv, stdv))


class ConvPoolLayer(nn.Layer):
    def __init__(self, input_channels, output_channels, filter_size, stride, padding, stdv, groups=1,
                 act=None):
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, stride=stride, padding=padding,
                               groups=groups, weight_attr=_uniform(stdv), bias_attr=_uniform(stdv))
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, inputs):
        x = self._conv(inputs)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, 1.0 / math.sqrt(3 * 11 * 11), act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, 1.0 / math.sqrt(64 * 5 * 5), act="relu")
        stdv = 1.0 / math.sqrt(192 * 3 * 3)
        self._conv3 = nn.Conv2D(192, 384, 3, stride=1, padding=1, weight_attr=_uniform(stdv),
                                bias_attr=_uniform(stdv))
        stdv = 1.0 / math.sqrt(384 * 3 * 3)
        self._conv4 = nn.Conv2D(384, 256, 3, stride=1, padding=1, weight_attr=_uniform(stdv),
                                bias_attr=_uniform(stdv))
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, 1.0 / math.sqrt(256 * 3 * 3), act="relu")
        if num_classes > 0:
            stdv = 1.0 / math.sqrt(256 * 6 * 6)
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(256 * 6 * 6, 4096, weight_attr=_uniform(stdv), bias_attr=_uniform(stdv))
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            stdv = 1.0 / math.sqrt(4096.0)
            self._fc7 = nn.Linear(4096, 4096, weight_attr=_uniform(stdv), bias_attr=_uniform(stdv))
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=_uniform(stdv), bias_attr=_uniform(stdv))

    def forward(self, inputs):
        relu = nn.functional.relu
        x = self._conv2(self._conv1(inputs))
        x = relu(self._conv4(relu(self._conv3(x))))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = nn.functional.flatten(x, 1)
            x = relu(self._fc6(self._drop1(x)))
            x = relu(self._fc7(self._drop2(x)))
            x = self._fc8(x)
        return x


def alexnet(pretrained=False, **kwargs):
    """AlexNet: 61,100,840 parameters with 1000 classes."""
    if pretrained:
        raise ValueError("alexnet: pretrained weights are not available (crew has no network access)")
    return AlexNet(**kwargs)
