"""crew.vision.models: networks built from crew.nn layers."""
from ... import nn
from ..._C.nn import MyNet as _CppMyNet
from ...nn.layer import CppLayer


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


from .resnet import (BasicBlock, BottleneckBlock, ResNet, resnet18, resnet34, resnet50, resnet101,  # noqa: E402
                     resnet152, wide_resnet50_2, wide_resnet101_2)
from .vgg import VGG, vgg11, vgg13, vgg16, vgg19  # noqa: E402
from .alexnet import AlexNet, alexnet  # noqa: E402
from .mobilenetv1 import ConvNormActivation, MobileNetV1, mobilenet_v1  # noqa: E402
from .mobilenetv2 import MobileNetV2, mobilenet_v2  # noqa: E402
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1  # noqa: E402


__all__ = ["LeNet", "MyNet", "BasicBlock", "BottleneckBlock", "ResNet", "resnet18", "resnet34", "resnet50",
           "resnet101", "resnet152", "wide_resnet50_2", "wide_resnet101_2", "VGG", "vgg11", "vgg13", "vgg16",
           "vgg19", "AlexNet", "alexnet", "MobileNetV1", "mobilenet_v1", "ConvNormActivation", "MobileNetV2",
           "mobilenet_v2", "SqueezeNet", "squeezenet1_0", "squeezenet1_1"]
