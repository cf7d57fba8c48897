"""paddle.vision.models: Paddle's parameter counts, state_dict keys, output shapes and one
backward step on a small input for each network."""
import numpy as np
import pytest

import crew as paddle
from crew.vision import models as M


def count(model):
    return sum(int(np.prod(p.shape)) for p in model.parameters())


def state_numel(model):
    return sum(int(np.prod(t.shape)) for t in model.state_dict().values())


# Paddle's (and torchvision's) published trainable-parameter counts for 1000 classes.
@pytest.mark.parametrize("name,params", [
    ("resnet50", 25_557_032), ("resnet101", 44_549_160), ("resnet152", 60_192_808),
    ("wide_resnet50_2", 68_883_240), ("vgg11", 132_863_336), ("vgg16", 138_357_544),
    ("alexnet", 61_100_840), ("mobilenet_v2", 3_504_872), ("squeezenet1_0", 1_248_424),
    ("squeezenet1_1", 1_235_496),
])
def test_parameter_counts_equal_paddles(name, params):
    assert count(getattr(M, name)()) == params


def test_mobilenet_v1_counts_and_batch_norm_variants():
    m = M.mobilenet_v1()
    assert count(m) == 4_231_976
    assert state_numel(m) == 4_253_864  # Paddle's summary: with the running means and variances
    bn = M.vgg11(batch_norm=True, num_classes=10)
    assert count(bn) == count(M.vgg11(num_classes=10)) + 2 * (64 + 128 + 2 * 256 + 4 * 512)


def test_state_dict_keys_follow_paddles_modules():
    r50 = M.resnet50(num_classes=10)
    keys = list(r50.state_dict())
    for k in ("conv1.weight", "bn1._mean", "layer1.0.conv3.weight", "layer1.0.downsample.0.weight",
              "layer1.0.downsample.1._variance", "layer4.2.bn3.bias", "fc.weight", "fc.bias"):
        assert k in keys, k
    assert len(keys) == 161 + 2 * 53  # parameters + (mean, variance) of 53 batch norms
    assert r50.fc.weight.shape == [2048, 10]  # Paddle's Linear layout
    v = M.vgg16(batch_norm=True, num_classes=10).state_dict()
    assert "features.1._mean" in v and "classifier.6.weight" in v and "features.41.bias" in v
    m1 = M.mobilenet_v1(num_classes=10).state_dict()
    assert "conv1.0.weight" in m1 and "conv5_5._pointwise_conv.1._mean" in m1
    assert m1["conv2_1._depthwise_conv.0.weight"].shape == [32, 1, 3, 3]  # depthwise
    m2 = M.mobilenet_v2(num_classes=10).state_dict()
    assert "features.1.conv.0.0.weight" in m2 and "features.18.1._variance" in m2 and "classifier.1.weight" in m2
    sq = M.squeezenet1_0(num_classes=10).state_dict()
    assert "_conv1._conv_path2._conv.weight" in sq and "_conv9.bias" in sq
    a = M.alexnet(num_classes=10).state_dict()
    assert list(a)[:2] == ["_conv1._conv.weight", "_conv1._conv.bias"] and "_fc8.weight" in a


@pytest.mark.parametrize("name,size", [("resnet50", 32), ("vgg11", 32),
                                       ("mobilenet_v1", 32), ("mobilenet_v2", 32), ("squeezenet1_0", 64),
                                       ("squeezenet1_1", 64), ("alexnet", 224)])
def test_forward_and_one_backward_step(name, size):
    np.random.seed(0)
    model = getattr(M, name)(num_classes=10)
    params = model.parameters()
    opt = paddle.optimizer.SGD(0.01, parameters=params)
    x = paddle.to_tensor(np.random.randn(2, 3, size, size).astype(np.float32))
    y = paddle.to_tensor(np.array([1, 7], np.int64))
    out = model(x)
    assert out.shape == [2, 10]
    loss = paddle.nn.functional.cross_entropy(out, y)
    loss.backward()
    assert all(p.grad is not None for p in params)
    before = params[0].numpy().copy()
    opt.step()
    assert not np.array_equal(before, params[0].numpy())
    model.eval()
    assert model(x).shape == [2, 10]


def test_feature_extractors_without_head():
    x = paddle.to_tensor(np.random.randn(1, 3, 64, 64).astype(np.float32))
    assert M.resnet50(num_classes=0, with_pool=False)(x).shape == [1, 2048, 2, 2]
    assert M.mobilenet_v2(num_classes=0)(x).shape == [1, 1280, 1, 1]
    assert isinstance(M.resnet50(num_classes=0), M.ResNet)


def test_resnet_rejects_what_it_cannot_build():
    with pytest.raises(ValueError, match="BottleneckBlock depth"):
        M.ResNet(M.BottleneckBlock, 18)
    with pytest.raises(ValueError, match="pretrained"):
        M.resnet50(pretrained=True)
