"""crew.vision.models: networks built from crew.nn layers."""
from .. import nn
from .._C.nn import MyNet as _CppMyNet
from .._C.nn import models as _models
from ..nn.layer import CppLayer


class LeNet(nn.Layer):
    """Paddle's LeNet: x [N, 1, 28, 28] -> logits [N, num_classes]."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            x = nn.functional.flatten(x, 1)
            x = self.fc(x)
        return x


def MyNet(num_classes=10, in_channels=1, image_size=28):
    """The seed's CNN as one C++ layer (train_cnn's network; forward runs without the GIL)."""
    return CppLayer(_CppMyNet(num_classes, in_channels, image_size))


# Paddle's block class for ResNet(block, depth); crew builds BasicBlock ResNets only.
BasicBlock = _models.BasicBlock


class ResNet(CppLayer):
    """Paddle's ResNet with BasicBlocks (depth 18 or 34) as one C++ layer
    (crew/nn/models/resnet.h): x [N, 3, H, W] -> logits [N, num_classes] (the feature map
    when num_classes <= 0 and with_pool=False). state_dict has Paddle's keys and layouts
    (conv1.weight, bn1._mean, layer2.0.downsample.0.weight, fc.weight [512, num_classes])."""

    def __init__(self, block, depth=50, width=64, num_classes=1000, with_pool=True, groups=1):
        if block is not BasicBlock or depth not in (18, 34) or width != 64 or groups != 1:
            raise ValueError(f"ResNet: crew builds BasicBlock ResNets of depth 18 or 34 with width=64, "
                             f"groups=1; got block={getattr(block, '__name__', block)}, depth={depth}, "
                             f"width={width}, groups={groups}")
        super().__init__(_models.ResNet(depth, num_classes, with_pool))
        self.num_classes = num_classes
        self.with_pool = with_pool


def _resnet(depth, pretrained, kwargs):
    if pretrained:
        raise ValueError(f"resnet{depth}: pretrained weights are not available (crew has no network "
                         "access); load a state dict with set_state_dict(crew.load(path))")
    return ResNet(BasicBlock, depth, **kwargs)


def resnet18(pretrained=False, **kwargs):
    """ResNet-18: resnet18(num_classes=10) has 11,181,642 parameters."""
    return _resnet(18, pretrained, kwargs)


def resnet34(pretrained=False, **kwargs):
    return _resnet(34, pretrained, kwargs)


__all__ = ["LeNet", "MyNet", "BasicBlock", "ResNet", "resnet18", "resnet34"]
