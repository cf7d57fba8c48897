"""Paddle's MobileNetV2 (mobilenetv2.py layout: features.N ConvBNReLU / InvertedResidual
blocks with .conv.M, classifier.1 Linear); depthwise convolutions are crew's grouped Conv2D."""
from ... import nn


def _make_divisible(v, divisor, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1, norm_layer=nn.BatchNorm2D):
        padding = (kernel_size - 1) // 2
        super().__init__(nn.Conv2D(in_planes, out_planes, kernel_size, stride, padding, groups=groups,
                                   bias_attr=False),
                         norm_layer(out_planes), nn.ReLU6())


class InvertedResidual(nn.Layer):
    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2D):
        super().__init__()
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer))
        layers.extend([ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim, norm_layer=norm_layer),
                       nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False), norm_layer(oup)])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
            [6, 320, 1, 1]]  # expansion t, channels c, repeats n, first stride s


class MobileNetV2(nn.Layer):
    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        input_channel = _make_divisible(32 * scale, 8)
        self.last_channel = _make_divisible(1280 * max(1.0, scale), 8)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in _SETTING:
            output_channel = _make_divisible(c * scale, 8)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(nn.functional.flatten(x, 1))
        return x


def mobilenet_v2(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV2: 3,504,872 parameters with scale 1.0 and 1000 classes."""
    if pretrained:
        raise ValueError("mobilenet_v2: pretrained weights are not available (crew has no network access)")
    return MobileNetV2(scale=scale, **kwargs)
