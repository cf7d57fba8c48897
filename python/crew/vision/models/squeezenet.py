"""Paddle's SqueezeNet 1.0 / 1.1 (squeezenet.py layout: _conv, _conv1.._conv8 MakeFire blocks
of _conv/_conv_path1/_conv_path2 MakeFireConv (each a ._conv), _conv9 classifier conv)."""
from ... import nn


class MakeFireConv(nn.Layer):
    def __init__(self, input_channels, output_channels, filter_size, padding=0):
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x):
        return nn.functional.relu(self._conv(x))


class MakeFire(nn.Layer):
    def __init__(self, input_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs):
        x = self._conv(inputs)
        from ... import concat
        return concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


_FIRES = [(96, 16, 64, 64), (128, 16, 64, 64), (128, 32, 128, 128), (256, 32, 128, 128),
          (256, 48, 192, 192), (384, 48, 192, 192), (384, 64, 256, 256), (512, 64, 256, 256)]
_FIRES_1_1 = [(64, 16, 64, 64)] + _FIRES[1:]
# After which fire blocks a max pool runs (Paddle's forward): 1.0 after 3 and 7, 1.1 after 2 and 4.
_POOL_AFTER = {"1.0": (3, 7), "1.1": (2, 4)}


class SqueezeNet(nn.Layer):
    def __init__(self, version, num_classes=1000, with_pool=True):
        super().__init__()
        if version not in ("1.0", "1.1"):
            raise ValueError(f"SqueezeNet: version must be '1.0' or '1.1', got {version!r}")
        self.version, self.num_classes, self.with_pool = version, num_classes, with_pool
        if version == "1.0":
            self._conv = nn.Conv2D(3, 96, 7, stride=2)
        else:
            self._conv = nn.Conv2D(3, 64, 3, stride=2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        for i, cfg in enumerate(_FIRES if version == "1.0" else _FIRES_1_1):
            setattr(self, f"_conv{i + 1}", MakeFire(*cfg))
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        x = self._pool(nn.functional.relu(self._conv(inputs)))
        for i in range(1, 9):
            x = getattr(self, f"_conv{i}")(x)
            if i in _POOL_AFTER[self.version]:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = self._avg_pool(nn.functional.relu(x))
            x = nn.functional.flatten(x, 1)
        return x


def squeezenet1_0(pretrained=False, **kwargs):
    """SqueezeNet 1.0: 1,248,424 parameters with 1000 classes."""
    if pretrained:
        raise ValueError("squeezenet1_0: pretrained weights are not available (crew has no network access)")
    return SqueezeNet("1.0", **kwargs)


def squeezenet1_1(pretrained=False, **kwargs):
    if pretrained:
        raise ValueError("squeezenet1_1: pretrained weights are not available (crew has no network access)")
    return SqueezeNet("1.1", **kwargs)
