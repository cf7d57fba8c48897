"""Paddle's ResNets. BasicBlock nets (depth 18, 34) are one C++ layer (crew/nn/models/
resnet.h); BottleneckBlock nets (50, 101, 152, wide_resnet50_2/101_2) are built here from
crew.nn layers with Paddle's module tree, so state_dict keys match Paddle's
(conv1.weight, bn1._mean, layer1.0.conv3.weight, layer2.0.downsample.0.weight, fc.weight).
"""
from ... import nn
from ..._C.nn import models as _models
from ...nn.layer import CppLayer

# Paddle's block class for ResNet(block, depth) with BasicBlocks (the C++ network).
BasicBlock = _models.BasicBlock


class BottleneckBlock(nn.Layer):
    """1x1 -> 3x3 (stride, groups) -> 1x1 convolutions, each with batch norm; output channels
    planes * 4; `downsample` maps the input when its shape differs."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride, groups=groups,
                               dilation=dilation, bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


_LAYERS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


class ResNet(CppLayer):
    """Paddle's ResNet(block, depth=50, width=64, num_classes=1000, with_pool=True, groups=1):
    x [N, 3, H, W] -> logits [N, num_classes] (the feature map when num_classes <= 0 and
    with_pool=False). BasicBlock: depth 18 or 34, width 64, groups 1 (one C++ layer);
    BottleneckBlock: depth 50, 101 or 152, any width and groups (Python layers)."""

    def __new__(cls, block=None, depth=50, *args, **kwargs):
        if cls is ResNet and block is BottleneckBlock:
            return object.__new__(_BottleneckResNet)
        return object.__new__(cls)

    def __init__(self, block, depth=50, width=64, num_classes=1000, with_pool=True, groups=1):
        if block is not BasicBlock or depth not in (18, 34) or width != 64 or groups != 1:
            raise ValueError(f"ResNet: crew builds BasicBlock ResNets of depth 18 or 34 with width=64, "
                             f"groups=1, and BottleneckBlock ResNets of depth 50, 101 or 152; got "
                             f"block={getattr(block, '__name__', block)}, depth={depth}, width={width}, "
                             f"groups={groups}")
        super().__init__(_models.ResNet(depth, num_classes, with_pool))
        self.num_classes = num_classes
        self.with_pool = with_pool


class _BottleneckResNet(ResNet):
    """ResNet with BottleneckBlocks, in Python (Paddle's resnet.py layout)."""

    def __init__(self, block, depth=50, width=64, num_classes=1000, with_pool=True, groups=1):
        nn.Layer.__init__(self, "resnet")
        if depth not in (50, 101, 152):
            raise ValueError(f"ResNet: BottleneckBlock depth must be 50, 101 or 152, got {depth}")
        layers = _LAYERS[depth]
        self.groups, self.base_width = groups, width
        self.num_classes, self.with_pool = num_classes, with_pool
        self.inplanes = 64
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride, bias_attr=False),
                nn.BatchNorm2D(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(nn.functional.flatten(x, 1))
        return x

    def _set_mode(self, training):
        pass


def _resnet(name, block, depth, pretrained, kwargs):
    if pretrained:
        raise ValueError(f"{name}: pretrained weights are not available (crew has no network "
                         "access); load a state dict with set_state_dict(crew.load(path))")
    return ResNet(block, depth, **kwargs)


def resnet18(pretrained=False, **kwargs):
    """ResNet-18: resnet18(num_classes=10) has 11,181,642 parameters."""
    return _resnet("resnet18", BasicBlock, 18, pretrained, kwargs)


def resnet34(pretrained=False, **kwargs):
    return _resnet("resnet34", BasicBlock, 34, pretrained, kwargs)


def resnet50(pretrained=False, **kwargs):
    """ResNet-50 (25,557,032 parameters with 1000 classes)."""
    return _resnet("resnet50", BottleneckBlock, 50, pretrained, kwargs)


def resnet101(pretrained=False, **kwargs):
    return _resnet("resnet101", BottleneckBlock, 101, pretrained, kwargs)


def resnet152(pretrained=False, **kwargs):
    return _resnet("resnet152", BottleneckBlock, 152, pretrained, kwargs)


def wide_resnet50_2(pretrained=False, **kwargs):
    """ResNet-50 with bottlenecks twice as wide (width=128)."""
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet50_2", BottleneckBlock, 50, pretrained, kwargs)


def wide_resnet101_2(pretrained=False, **kwargs):
    kwargs["width"] = 64 * 2
    return _resnet("wide_resnet101_2", BottleneckBlock, 101, pretrained, kwargs)
