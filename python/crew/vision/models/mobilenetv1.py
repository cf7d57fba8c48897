"""Paddle's MobileNetV1 (mobilenetv1.py layout since Paddle 2.3: conv1, conv2_1 .. conv6
DepthwiseSeparable blocks of _depthwise_conv/_pointwise_conv ConvNormActivation blocks
(.0 conv, .1 batch norm, .2 ReLU), fc); the depthwise convolutions are crew's grouped Conv2D."""
from ... import nn


class ConvNormActivation(nn.Sequential):
    """Paddle's paddle.vision.ops.ConvNormActivation: Conv2D (no bias when normalised),
    norm_layer, activation_layer; padding defaults to (kernel_size - 1) // 2 * dilation."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2D, activation_layer=nn.ReLU, dilation=1, bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                            groups=groups, bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


class DepthwiseSeparable(nn.Layer):
    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale):
        super().__init__()
        self._depthwise_conv = ConvNormActivation(in_channels, int(out_channels1 * scale), kernel_size=3,
                                                  stride=stride, padding=1, groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(int(out_channels1 * scale), int(out_channels2 * scale),
                                                  kernel_size=1, stride=1, padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


# (name, in_channels, out_channels1, out_channels2, num_groups, stride), Paddle's order.
_BLOCKS = [("conv2_1", 32, 32, 64, 32, 1), ("conv2_2", 64, 64, 128, 64, 2),
           ("conv3_1", 128, 128, 128, 128, 1), ("conv3_2", 128, 128, 256, 128, 2),
           ("conv4_1", 256, 256, 256, 256, 1), ("conv4_2", 256, 256, 512, 256, 2)] + \
          [(f"conv5_{i + 1}", 512, 512, 512, 512, 1) for i in range(5)] + \
          [("conv5_6", 512, 512, 1024, 512, 2), ("conv6", 1024, 1024, 1024, 1024, 1)]


class MobileNetV1(nn.Layer):
    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        self.dwsl = []
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        for name, cin, c1, c2, groups, stride in _BLOCKS:
            block = DepthwiseSeparable(int(cin * scale), c1, c2, groups, stride, scale)
            self.dwsl.append(self.add_sublayer(name, block))
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(nn.functional.flatten(x, 1))
        return x


def mobilenet_v1(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV1: 4,253,864 parameters with scale 1.0 and 1000 classes."""
    if pretrained:
        raise ValueError("mobilenet_v1: pretrained weights are not available (crew has no network access)")
    return MobileNetV1(scale=scale, **kwargs)
