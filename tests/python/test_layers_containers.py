"""Containers (LayerList, LayerDict, ParameterList), Layer's registration helpers, and the
layers composed from crew's ops: each against a NumPy reference, with a finite-difference
gradient check."""
import numpy as np
import pytest

import crew as paddle
from crew import nn
from crew.nn import functional as F


def t(a, grad=True, dtype=np.float64):
    return paddle.to_tensor(np.asarray(a, dtype), stop_gradient=not grad)


def t32(a, grad=True):
    return t(a, grad, np.float32)


def gradcheck(fn, x, eps=1e-6, tol=1e-5, samples=12, make=t):
    """d sum(fn(x) * r) / dx by backward against central differences at a few entries.
    make=t32 with eps=1 checks the float32-only oneDNN convolutions: they are linear in each
    operand, so a unit step's difference is exact up to float32 rounding."""
    rng = np.random.default_rng(0)
    xt = make(x)
    y = fn(xt)
    r = rng.standard_normal(y.shape)
    paddle.sum(y * make(r, grad=False)).backward()
    analytic = xt.grad.numpy()
    flat = x.reshape(-1)
    for i in rng.choice(flat.size, size=min(samples, flat.size), replace=False):
        old = flat[i]
        flat[i] = old + eps
        up = np.sum(fn(make(x, grad=False)).numpy() * r)
        flat[i] = old - eps
        down = np.sum(fn(make(x, grad=False)).numpy() * r)
        flat[i] = old
        num = (up - down) / (2 * eps)
        assert abs(num - analytic.reshape(-1)[i]) <= tol * max(1.0, abs(num)), (i, num, analytic.reshape(-1)[i])


# ---- containers and registration ----

def test_layer_list_registers_indexed_sublayers():
    layers = nn.LayerList([nn.Linear(2, 3), nn.Linear(3, 4)])
    layers.append(nn.Linear(4, 1))
    assert len(layers) == 3 and isinstance(layers[-1], nn.Linear)
    assert list(layers.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"]
    layers.insert(0, nn.ReLU())
    assert [type(l).__name__ for l in layers] == ["ReLU", "Linear", "Linear", "Linear"]
    del layers[0]
    assert list(layers.state_dict())[0] == "0.weight" and len(layers[0:2]) == 2

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(2, 2) for _ in range(2)])

    assert list(Net().state_dict()) == ["blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias"]


def test_layer_dict_and_parameter_list():
    d = nn.LayerDict({"a": nn.Linear(2, 2)})
    d["b"] = nn.Linear(2, 1)
    assert list(d.keys()) == ["a", "b"] and "a" in d and len(d) == 2
    assert list(d.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]
    d.pop("a")
    assert list(d) == ["b"]
    p = nn.ParameterList([paddle.to_tensor(np.ones(3, np.float32))])
    p.append(paddle.to_tensor(np.zeros(2, np.float32)))
    assert len(p) == 2 and list(p.state_dict()) == ["0", "1"] and not p[0].stop_gradient


def test_registration_helpers():
    net = nn.Layer()
    net.add_sublayer("fc", nn.Linear(2, 2))
    net.add_parameter("w", paddle.to_tensor(np.ones(2, np.float32)))
    net.register_buffer("steps", paddle.to_tensor(np.zeros(1, np.float32)))
    net.register_buffer("scratch", paddle.to_tensor(np.zeros(1, np.float32)), persistable=False)
    assert sorted(net.state_dict()) == ["fc.bias", "fc.weight", "steps", "w"]
    assert [n for n, _ in net.named_sublayers()] == ["fc"] and len(net.sublayers(include_self=True)) == 2
    seen = []
    net.apply(lambda l: seen.append(type(l).__name__))
    assert seen == ["Linear", "Layer"]


# ---- composed layers against NumPy ----

X = np.random.default_rng(1).standard_normal((2, 4, 5, 6))


def np_softplus(x, beta=1.0):
    return np.log1p(np.exp(beta * x)) / beta


@pytest.mark.parametrize("layer,ref", [
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Silu(), lambda x: x / (1 + np.exp(-x))),
    (nn.Softplus(beta=2), lambda x: np_softplus(x, 2.0)),
    (nn.Identity(), lambda x: x),
])
def test_activations_match_numpy_and_gradcheck(layer, ref):
    x = X * 3.0
    x[np.abs(x) < 1e-3] = 0.5  # no kinks under the finite differences
    x[np.abs(np.abs(x + 3) - 3) < 1e-3] = 1.5
    x[np.abs(x - 6) < 1e-3] = 1.5
    np.testing.assert_allclose(layer(t(x, grad=False)).numpy(), ref(x), rtol=1e-6, atol=1e-9)
    gradcheck(lambda v: layer(v), x.copy())


def test_prelu_per_channel():
    layer = nn.PReLU(4, init=0.2)
    w = layer.weight.numpy().astype(np.float64).reshape(1, 4, 1, 1)
    x = paddle.to_tensor(X.astype(np.float32))
    np.testing.assert_allclose(layer(x).numpy(), np.where(X > 0, X, w * X), rtol=1e-5, atol=1e-6)
    gradcheck(lambda v: F.prelu(v, t(np.array([0.1, 0.2, 0.3, 0.4]), grad=False)), X.copy())


def np_group_norm(x, g, eps):
    n, c = x.shape[:2]
    r = x.reshape(n, g, -1)
    y = (r - r.mean(2, keepdims=True)) / np.sqrt(r.var(2, keepdims=True) + eps)
    return y.reshape(x.shape)


def test_group_norm_and_instance_norm():
    gn = nn.GroupNorm(2, 4)
    x32 = paddle.to_tensor(X.astype(np.float32))
    np.testing.assert_allclose(gn(x32).numpy(), np_group_norm(X, 2, 1e-5), rtol=1e-4, atol=1e-5)
    inn = nn.InstanceNorm2D(4)
    np.testing.assert_allclose(inn(x32).numpy(), np_group_norm(X, 4, 1e-5), rtol=1e-4, atol=1e-5)
    gradcheck(lambda v: F.group_norm(v, 2, 1e-5, t(np.arange(1.0, 5.0), False), t(np.ones(4), False)), X.copy())
    gradcheck(lambda v: F.instance_norm(v, 1e-5), X.copy())


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
def test_pad2d(mode):
    pad = [1, 2, 3, 0]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}[mode]
    want = np.pad(X, [(0, 0), (0, 0), (3, 0), (1, 2)], mode=np_mode)
    np.testing.assert_allclose(nn.Pad2D(pad, mode=mode)(t(X, False)).numpy(), want)
    gradcheck(lambda v: F.pad(v, pad, mode=mode), X.copy())


def test_upsample_nearest_and_bilinear():
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    near = nn.Upsample(scale_factor=2)(t(x, False)).numpy()
    np.testing.assert_array_equal(near, x.repeat(2, axis=2).repeat(2, axis=3))
    corners = nn.Upsample(size=[3, 5], mode="bilinear", align_corners=True)(t(x, False)).numpy()
    np.testing.assert_allclose(corners[0, 0, :, 0], [0, 1.5, 3])  # corners stay, midpoints average
    np.testing.assert_allclose(corners[0, 0, 0], [0, 0.5, 1, 1.5, 2])
    half = nn.Upsample(scale_factor=2, mode="bilinear")(t(x, False)).numpy()  # half-pixel centres
    np.testing.assert_allclose(half[0, 0, 0], [0, 0.25, 0.75, 1.25, 1.75, 2])
    gradcheck(lambda v: F.interpolate(v, size=[7, 4], mode="bilinear"), X.copy())


def test_adaptive_max_pool_and_1d_pools():
    x32 = paddle.to_tensor(X.astype(np.float32))
    out = nn.AdaptiveMaxPool2D((2, 3))(x32).numpy()
    want = np.empty((2, 4, 2, 3))
    for i, (r0, r1) in enumerate([(0, 3), (2, 5)]):  # Paddle's bins: floor(i H / oh) .. ceil((i + 1) H / oh)
        for j in range(3):
            want[:, :, i, j] = X[:, :, r0:r1, 2 * j:2 * j + 2].max(axis=(2, 3))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    seq = X.reshape(2, 4, 30)
    s32 = paddle.to_tensor(seq.astype(np.float32))
    np.testing.assert_allclose(nn.MaxPool1D(3)(s32).numpy(), seq.reshape(2, 4, 10, 3).max(3), rtol=1e-6)
    np.testing.assert_allclose(nn.AvgPool1D(5)(s32).numpy(), seq.reshape(2, 4, 6, 5).mean(3), rtol=1e-5)


def test_ceil_mode_max_pool_keeps_the_partial_window():
    x = np.arange(25.0, dtype=np.float32).reshape(1, 1, 5, 5) * -1.0
    out = nn.MaxPool2D(2, 2, ceil_mode=True)(paddle.to_tensor(x)).numpy()
    assert out.shape == (1, 1, 3, 3) and out[0, 0, 2, 2] == x[0, 0, 4, 4]


def test_dropout_variants():
    x = paddle.to_tensor(np.ones((8, 16, 4, 4), np.float32))
    d = nn.Dropout2D(0.5)
    y = d(x).numpy()
    per_channel = y.reshape(8, 16, -1)
    assert np.all(per_channel.min(2) == per_channel.max(2))  # whole channels kept or dropped
    assert set(np.unique(y)) <= {0.0, 2.0}
    d.eval()
    np.testing.assert_array_equal(d(x).numpy(), x.numpy())
    down = nn.Dropout(0.25, mode="downscale_in_infer")
    assert set(np.unique(down(x).numpy())) <= {0.0, 1.0}
    down.eval()
    np.testing.assert_allclose(down(x).numpy(), 0.75)


# ---- convolutions composed from slices and matmuls ----

def np_conv1d(x, w, b, stride, pad, dil, groups):
    n, c, length = x.shape
    o, cg, k = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad)])
    out_len = (length + 2 * pad - dil * (k - 1) - 1) // stride + 1
    y = np.zeros((n, o, out_len))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(out_len):
            win = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + dil * (k - 1) + 1:dil]
            y[:, oc, i] = np.sum(win * w[oc], axis=(1, 2)) + b[oc]
    return y


def np_conv2d_transpose(x, w, b, s, p, op, d):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    full = ((h - 1) * s + d * (kh - 1) + 1 + op, (wd - 1) * s + d * (kw - 1) + 1 + op)
    y = np.zeros((n, o) + full)
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for bb in range(kw):
                    y[:, :, i * s + a * d, j * s + bb * d] += x[:, :, i, j] @ w[:, :, a, bb]
    return y[:, :, p:full[0] - p, p:full[1] - p] + b.reshape(1, o, 1, 1)


@pytest.mark.parametrize("stride,pad,dil,groups", [(1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1)])
def test_conv1d_matches_numpy_and_gradchecks(stride, pad, dil, groups):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 11))
    conv = nn.Conv1D(4, 6, 3, stride=stride, padding=pad, dilation=dil, groups=groups)
    assert conv.weight.shape == [6, 4 // groups, 3] and sorted(conv.state_dict()) == ["bias", "weight"]
    np.copyto(conv.bias.numpy(), rng.standard_normal(6).astype(np.float32))
    w, b = conv.weight.numpy().astype(np.float64), conv.bias.numpy().astype(np.float64)
    got = conv(paddle.to_tensor(x.astype(np.float32))).numpy()
    np.testing.assert_allclose(got, np_conv1d(x, w, b, stride, pad, dil, groups), rtol=1e-4, atol=1e-5)
    gradcheck(lambda v: F.conv1d(v, t32(w, False), t32(b, False), stride, pad, dil, groups), x.copy(), 1.0, 1e-3,
              make=t32)
    gradcheck(lambda v: F.conv1d(t32(x, False), v, None, stride, pad, dil, groups), w.copy(), 1.0, 1e-3, make=t32)


@pytest.mark.parametrize("stride,pad,out_pad,dil", [(1, 0, 0, 1), (2, 1, 1, 1), (2, 0, 0, 2)])
def test_conv2d_transpose_matches_numpy_and_gradchecks(stride, pad, out_pad, dil):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5))
    conv = nn.Conv2DTranspose(3, 2, 3, stride=stride, padding=pad, output_padding=out_pad, dilation=dil)
    assert conv.weight.shape == [3, 2, 3, 3]
    w, b = conv.weight.numpy().astype(np.float64), conv.bias.numpy().astype(np.float64)
    got = conv(paddle.to_tensor(x.astype(np.float32))).numpy()
    np.testing.assert_allclose(got, np_conv2d_transpose(x, w, b, stride, pad, out_pad, dil), rtol=1e-4, atol=1e-5)
    gradcheck(lambda v: F.conv2d_transpose(v, t32(w, False), None, stride, pad, out_pad, dil), x.copy(), 1.0, 1e-3,
              make=t32)
    gradcheck(lambda v: F.conv2d_transpose(t32(x, False), v, t32(b, False), stride, pad, out_pad, dil), w.copy(),
              1.0, 1e-3, make=t32)
