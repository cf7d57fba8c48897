"""crew.nn layers and functionals of Paddle 2.4 added in layers_extra.py / functional_extra.py:
each against a float64 NumPy reference (and PyTorch when it is importable), gradients by
central differences on float64 (or, for the float32-only convolutions, against the exact
derivative of the linear NumPy reference)."""
import math

import numpy as np
import pytest

import crew
import crew.nn as nn
import crew.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
RNG = np.random.default_rng(7)


def t(a, grad=False, dtype=np.float32):
    return crew.to_tensor(np.asarray(a, dtype=dtype), stop_gradient=not grad)


def numgrad(f, x, eps=1e-6):
    """Central differences of the scalar f(x) for a float64 array x."""
    g = np.zeros_like(x)
    flat, gf = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f(x)
        flat[i] = old - eps
        lo = f(x)
        flat[i] = old
        gf[i] = (hi - lo) / (2 * eps)
    return g


def gradcheck(fn, *arrays, rtol=1e-5, atol=1e-7):
    """fn(*crew tensors) -> tensor; compares d sum(fn * w) / d input with central differences."""
    out = fn(*[t(a, dtype=np.float64) for a in arrays])
    w = RNG.standard_normal(out.shape)
    ins = [t(a, True, np.float64) for a in arrays]
    (fn(*ins) * t(w, dtype=np.float64)).sum().backward()
    for i, a in enumerate(arrays):
        def f(v, i=i):
            args = [t(b, dtype=np.float64) for b in arrays]
            args[i] = t(v, dtype=np.float64)
            return float((fn(*args).numpy() * w).sum())
        np.testing.assert_allclose(ins[i].grad.numpy(), numgrad(f, np.array(a, dtype=np.float64)), rtol=rtol,
                                   atol=atol)


# ---- NumPy references ----
def ref_conv2d(x, w, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dilation[1]:j * dilation[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return y


def ref_conv_transpose2d(x, w, stride, padding, output_padding, dilation, groups):
    """Scatter form: every input pixel adds weight-scaled taps to the output."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    full = [(h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + output_padding[0],
            (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + output_padding[1]]
    y = np.zeros((n, og * groups, full[0], full[1]))
    cg = c // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg], w[g * cg:(g + 1) * cg, :, i, j])
                y[:, g * og:(g + 1) * og, i * dilation[0]:i * dilation[0] + stride[0] * (h - 1) + 1:stride[0],
                  j * dilation[1]:j * dilation[1] + stride[1] * (wd - 1) + 1:stride[1]] += contrib
    return y[:, :, padding[0]:full[0] - padding[0], padding[1]:full[1] - padding[1]]


# ---- convolutions ----
CONVT_CASES = [
    # (x shape, weight shape, stride, padding, output_padding, dilation, groups)
    ((2, 3, 4, 5), (3, 2, 3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1),
    ((2, 4, 5, 6), (4, 3, 3, 2), (2, 2), (1, 1), (1, 1), (1, 1), 2),
    ((1, 2, 3, 4), (2, 5, 2, 3), (3, 2), (0, 1), (2, 0), (2, 1), 1),
]


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv2d_transpose_matches_reference_and_its_gradients(case):
    xs, ws, s, p, op, d, g = case
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    b = RNG.standard_normal(ws[1] * g)
    xt, wt, bt = t(x, True), t(w, True), t(b, True)
    y = F.conv2d_transpose(xt, wt, bt, stride=s, padding=p, output_padding=op, dilation=d, groups=g)
    ref = ref_conv_transpose2d(x, w, s, p, op, d, g) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)
    # The op is linear in x and in w: its exact gradients are the reference's adjoints.
    gy = RNG.standard_normal(ref.shape)
    (y * t(gy)).sum().backward()
    f_x = lambda v: float((ref_conv_transpose2d(v, w, s, p, op, d, g) * gy).sum())  # noqa: E731
    f_w = lambda v: float((ref_conv_transpose2d(x, v, s, p, op, d, g) * gy).sum())  # noqa: E731
    np.testing.assert_allclose(xt.grad.numpy(), numgrad(f_x, x.copy(), 1.0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(wt.grad.numpy(), numgrad(f_w, w.copy(), 1.0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bt.grad.numpy(), gy.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-4)
    if torch is not None:
        ty = TF.conv_transpose2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), s, p, op, g, d)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_output_size_and_errors():
    x = t(RNG.standard_normal((1, 2, 4, 4)))
    w = t(RNG.standard_normal((2, 3, 3, 3)))
    assert F.conv2d_transpose(x, w, stride=2, padding=1, output_size=[8, 8]).shape == [1, 3, 8, 8]
    assert F.conv2d_transpose(x, w, stride=2, padding=1).shape == [1, 3, 7, 7]
    with pytest.raises(ValueError, match="output_size"):
        F.conv2d_transpose(x, w, stride=2, padding=1, output_size=[10, 10])
    with pytest.raises(Exception, match="output_padding"):
        F.conv2d_transpose(x, w, stride=1, output_padding=1)
    with pytest.raises(ValueError, match="NHWC"):
        F.conv2d_transpose(x, w, data_format="NHWC")
    with pytest.raises(Exception, match="channels"):
        F.conv2d_transpose(t(RNG.standard_normal((1, 3, 4, 4))), w)


def test_conv2d_transpose_layer_trains_and_keeps_paddle_keys():
    layer = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, groups=2)
    assert layer.weight.shape == [4, 3, 3, 3] and layer.bias.shape == [6]
    assert sorted(layer.state_dict().keys()) == ["bias", "weight"]
    x = t(RNG.standard_normal((2, 4, 5, 5)))
    y = layer(x, output_size=[10, 10])
    assert y.shape == [2, 6, 10, 10]
    y.sum().backward()
    assert layer.weight.grad is not None and layer.bias.grad is not None
    assert nn.Conv2DTranspose(2, 2, 2, bias_attr=False).bias is None


def test_conv2d_functional_padding_forms():
    x, w = RNG.standard_normal((2, 4, 7, 6)), RNG.standard_normal((6, 2, 3, 2))
    b = RNG.standard_normal(6)
    y = F.conv2d(t(x), t(w), t(b), stride=[2, 1], padding=[1, 2], dilation=[1, 2], groups=2)
    ref = ref_conv2d(x, w, (2, 1), (1, 2), (1, 2), 2) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)
    same = F.conv2d(t(x), t(w), None, padding="SAME", groups=2)
    assert same.shape == [2, 6, 7, 6]
    ref = ref_conv2d(np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1))), w, (1, 1), (0, 0), (1, 1), 2)
    np.testing.assert_allclose(same.numpy(), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="NHWC"):
        F.conv2d(t(x), t(w), data_format="NHWC")


def test_conv1d_and_conv1d_transpose():
    x, w, b = RNG.standard_normal((2, 4, 9)), RNG.standard_normal((6, 2, 3)), RNG.standard_normal(6)
    y = F.conv1d(t(x), t(w), t(b), stride=2, padding=1, dilation=2, groups=2)
    ref = ref_conv2d(x[:, :, None], w[:, :, None], (1, 2), (0, 1), (1, 2), 2)[:, :, 0] + b.reshape(1, -1, 1)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)
    layer = nn.Conv1D(4, 6, 3, padding=1)
    assert layer.weight.shape == [6, 4, 3] and layer(t(x)).shape == [2, 6, 9]
    wt = RNG.standard_normal((4, 3, 3))
    yt = F.conv1d_transpose(t(x), t(wt), None, stride=2, padding=1, output_padding=1)
    reft = ref_conv_transpose2d(x[:, :, None], wt[:, :, None], (1, 2), (0, 1), (0, 1), (1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(yt.numpy(), reft, rtol=1e-5, atol=1e-5)
    lt = nn.Conv1DTranspose(4, 3, 3, stride=2)
    assert lt.weight.shape == [4, 3, 3] and lt(t(x)).shape == [2, 3, 19]
    if torch is not None:
        ty = TF.conv1d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1, 2, 2)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)


# ---- pools ----
def test_pool_functionals_and_1d_layers():
    x = RNG.standard_normal((2, 3, 7, 8))
    y = F.max_pool2d(t(x), 3, 2, 1)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ref = np.stack([np.stack([xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3)) for j in range(4)], -1)
                    for i in range(4)], -2)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    assert F.max_pool2d(t(x), 2, 2, ceil_mode=True).shape == [2, 3, 4, 4]
    a = F.avg_pool2d(t(x), 2)
    np.testing.assert_allclose(a.numpy(), x[:, :, :6].reshape(2, 3, 3, 2, 4, 2).mean(axis=(3, 5)), rtol=1e-5)
    inc = F.avg_pool2d(t(x), 3, 1, 1, exclusive=False)
    xz = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.stack([np.stack([xz[:, :, i:i + 3, j:j + 3].mean(axis=(2, 3)) for j in range(8)], -1)
                    for i in range(7)], -2)
    np.testing.assert_allclose(inc.numpy(), ref, rtol=1e-5, atol=1e-6)
    s = RNG.standard_normal((2, 3, 10))
    np.testing.assert_allclose(nn.MaxPool1D(2)(t(s)).numpy(), s.reshape(2, 3, 5, 2).max(-1), rtol=1e-6)
    np.testing.assert_allclose(nn.AvgPool1D(2)(t(s)).numpy(), s.reshape(2, 3, 5, 2).mean(-1), rtol=1e-5)
    padded = nn.AvgPool1D(3, 1, 1)(t(s)).numpy()  # exclusive: the edges average 2 values
    np.testing.assert_allclose(padded[..., 0], s[..., :2].mean(-1), rtol=1e-5)
    ad = nn.AdaptiveAvgPool1D(4)(t(s)).numpy()
    bins = [(0, 3), (2, 5), (5, 8), (7, 10)]
    np.testing.assert_allclose(ad, np.stack([s[..., a:b].mean(-1) for a, b in bins], -1), rtol=1e-5)


# ---- activations ----
SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
ACTS = {
    "elu": (lambda x: F.elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a)), nn.ELU(0.7)),
    "selu": (F.selu, lambda a: SELU_S * np.where(a > 0, a, SELU_A * np.expm1(a)), nn.SELU()),
    "swish": (F.swish, lambda a: a / (1 + np.exp(-a)), nn.Swish()),
    "mish": (F.mish, lambda a: a * np.tanh(np.log1p(np.exp(a))), nn.Mish()),
    "hardsigmoid": (F.hardsigmoid, lambda a: np.clip(a * 0.1666667 + 0.5, 0, 1), nn.Hardsigmoid()),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda a: np.clip(a, -0.5, 2.0), nn.Hardtanh(-0.5, 2.0)),
    "softsign": (F.softsign, lambda a: a / (1 + np.abs(a)), nn.Softsign()),
    "tanhshrink": (F.tanhshrink, lambda a: a - np.tanh(a), nn.Tanhshrink()),
    "log_softmax": (lambda x: F.log_softmax(x, 1),
                    lambda a: a - a.max(1, keepdims=True) - np.log(np.exp(a - a.max(1, keepdims=True)).sum(
                        1, keepdims=True)), nn.LogSoftmax(1)),
}


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_matches_numpy_and_gradcheck(name):
    fn, ref, layer = ACTS[name]
    a = RNG.standard_normal((3, 5, 4)) * 3
    a[np.abs(a - np.round(a)) < 1e-3] += 0.01  # away from the kinks at -1, 0, 1, 2, +-3
    for dtype, tol in ((np.float32, 2e-6), (np.float64, 1e-12)):
        np.testing.assert_allclose(fn(t(a, dtype=dtype)).numpy(), ref(a), rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(layer(t(a)).numpy(), ref(a), rtol=2e-5, atol=2e-6)
    gradcheck(fn, a)
    # float32 gradients (oneDNN for elu, swish, mish, hardtanh) agree with float64's
    x32, x64 = t(a, True), t(a, True, np.float64)
    fn(x32).sum().backward()
    fn(x64).sum().backward()
    np.testing.assert_allclose(x32.grad.numpy(), x64.grad.numpy(), rtol=1e-4, atol=1e-5)


# ---- normalisation ----
def test_batch_norm_1d_3d_and_fluid_style():
    x = RNG.standard_normal((4, 3, 5))
    bn = nn.BatchNorm1D(3)
    assert sorted(bn.state_dict().keys()) == ["_mean", "_variance", "bias", "weight"]
    y = bn(t(x)).numpy()
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(y, (x - mu[:, None]) / np.sqrt(var[:, None] + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mu, rtol=1e-4, atol=1e-6)
    bn.eval()
    np.testing.assert_allclose(bn(t(x)).numpy(), (x - bn._mean.numpy()[:, None]) /
                               np.sqrt(bn._variance.numpy()[:, None] + 1e-5), rtol=1e-4, atol=1e-5)
    x2 = RNG.standard_normal((6, 3))
    out = nn.BatchNorm1D(3)(t(x2)).numpy()
    np.testing.assert_allclose(out, (x2 - x2.mean(0)) / np.sqrt(x2.var(0) + 1e-5), rtol=1e-4, atol=1e-5)
    x5 = RNG.standard_normal((2, 3, 2, 3, 4))
    out = nn.BatchNorm3D(3)(t(x5)).numpy()
    m5, v5 = x5.mean(axis=(0, 2, 3, 4), keepdims=True), x5.var(axis=(0, 2, 3, 4), keepdims=True)
    np.testing.assert_allclose(out, (x5 - m5) / np.sqrt(v5 + 1e-5), rtol=1e-4, atol=1e-5)
    fluid = nn.BatchNorm(3, act="relu")
    x4 = RNG.standard_normal((2, 3, 4, 4))
    m4, v4 = x4.mean(axis=(0, 2, 3), keepdims=True), x4.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(fluid(t(x4)).numpy(), np.maximum((x4 - m4) / np.sqrt(v4 + 1e-5), 0), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match="NLC"):
        nn.BatchNorm1D(3, data_format="NLC")
    with pytest.raises(ValueError, match="rank"):
        nn.BatchNorm3D(3)(t(x4))


def test_batch_norm_functional_gradients_match_torch():
    x = RNG.standard_normal((4, 3, 5))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    xt, wt, bt = t(x, True), t(w, True), t(b, True)
    rm, rv = t(np.zeros(3)), t(np.ones(3))
    y = F.batch_norm(xt, rm, rv, wt, bt, training=True)
    gy = RNG.standard_normal(x.shape)
    (y * t(gy)).sum().backward()
    if torch is None:
        pytest.skip("torch is not importable")
    X, W, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    Y = TF.batch_norm(X, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64), W, B, True)
    (Y * torch.tensor(gy)).sum().backward()
    np.testing.assert_allclose(y.numpy(), Y.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xt.grad.numpy(), X.grad.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(wt.grad.numpy(), W.grad.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_local_response_norm(size):
    x = RNG.standard_normal((2, 6, 3, 4))
    y = nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5)(t(x)).numpy()
    sq = np.pad(x * x, ((0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)))
    div = np.stack([sq[:, c:c + size].sum(1) for c in range(6)], 1) * 0.3 / size + 1.5
    np.testing.assert_allclose(y, x / div ** 0.6, rtol=1e-5, atol=1e-6)
    y64 = F.local_response_norm(t(x, dtype=np.float64), size, 0.3, 0.6, 1.5).numpy()
    np.testing.assert_allclose(y64, x / div ** 0.6, rtol=1e-10)
    gradcheck(lambda v: F.local_response_norm(v, size, 0.3, 0.6, 1.5), x[:1, :, :2, :2])
    x3 = RNG.standard_normal((2, 6, 5))  # NCL
    sq3 = np.pad(x3 * x3, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    div3 = np.stack([sq3[:, c:c + size].sum(1) for c in range(6)], 1) * 0.3 / size + 1.5
    np.testing.assert_allclose(F.local_response_norm(t(x3), size, 0.3, 0.6, 1.5, data_format="NCL").numpy(),
                               x3 / div3 ** 0.6, rtol=1e-5, atol=1e-6)
    xt = t(x, True)
    gy = RNG.standard_normal(x.shape)
    (F.local_response_norm(xt, size, 0.3, 0.6, 1.5) * t(gy)).sum().backward()
    if torch is not None:
        tx = torch.tensor(x, requires_grad=True)
        ty = TF.local_response_norm(tx, size, 0.3, 0.6, 1.5)
        np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        (ty * torch.tensor(gy)).sum().backward()
        np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_dropout_functional_and_alpha_dropout():
    x = t(np.ones((200, 50)))
    y = F.dropout(x, 0.3).numpy()
    assert np.all((y == 0) | np.isclose(y, 1 / 0.7)) and 0.2 < (y == 0).mean() < 0.4
    np.testing.assert_array_equal(F.dropout(x, 0.3, training=False).numpy(), x.numpy())
    np.testing.assert_allclose(F.dropout(x, 0.3, training=False, mode="downscale_in_infer").numpy(), 0.7)
    a = RNG.standard_normal((400, 250))
    out = nn.AlphaDropout(0.2)(t(a)).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02  # self-normalising
    layer = nn.AlphaDropout(0.2)
    layer.eval()
    np.testing.assert_array_equal(layer(t(a)).numpy(), t(a).numpy())


# ---- shapes ----
def test_pixel_shuffle_and_unfold():
    x = RNG.standard_normal((2, 8, 3, 4))
    y = nn.PixelShuffle(2)(t(x)).numpy()
    ref = x.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    np.testing.assert_array_equal(y, ref.astype(np.float32))
    u = F.unfold(t(x), [2, 3], strides=[1, 2], paddings=1, dilations=1).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = [xp[:, :, i:i + 2, j:j + 3].reshape(2, -1) for i in range(4) for j in range(0, 4, 2)]
    np.testing.assert_allclose(u, np.stack(cols, -1), rtol=1e-6)
    if torch is not None:
        tu = TF.unfold(torch.tensor(x), (2, 3), 1, 1, (1, 2))
        np.testing.assert_allclose(u, tu.numpy(), rtol=1e-6)
    xt = t(x, True)
    F.unfold(xt, 2).sum().backward()  # each pixel counted once per window it falls in
    counts = np.zeros((3, 4))
    for i in range(2):
        for j in range(3):
            counts[i:i + 2, j:j + 2] += 1
    np.testing.assert_allclose(xt.grad.numpy(), np.broadcast_to(counts, x.shape), rtol=1e-6)


def test_one_hot_label_smooth():
    oh = F.one_hot(crew.to_tensor(np.array([[0, 2], [1, 3]], dtype=np.int64)), 4).numpy()
    assert oh.shape == (2, 2, 4) and oh.dtype == np.float32
    np.testing.assert_array_equal(oh.argmax(-1), [[0, 2], [1, 3]])
    with pytest.raises(IndexError, match="outside"):
        F.one_hot(crew.to_tensor(np.array([4], dtype=np.int64)), 4)
    lab = np.eye(4)[[0, 3]]
    np.testing.assert_allclose(F.label_smooth(t(lab), epsilon=0.2).numpy(), lab * 0.8 + 0.05, rtol=1e-6)
    prior = np.array([[0.1, 0.2, 0.3, 0.4]])
    np.testing.assert_allclose(F.label_smooth(t(lab), t(prior), 0.2).numpy(), lab * 0.8 + prior * 0.2, rtol=1e-6)


# ---- distances and losses ----
def test_normalize_cosine_pairwise():
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    np.testing.assert_allclose(F.normalize(t(a)).numpy(), a / np.linalg.norm(a, axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(F.normalize(t(a), p=1, axis=0).numpy(), a / np.abs(a).sum(0), rtol=1e-5)
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    np.testing.assert_allclose(nn.CosineSimilarity()(t(a), t(b)).numpy(), cos, rtol=1e-5)
    d = np.linalg.norm(a - b + 1e-6, axis=-1)
    np.testing.assert_allclose(nn.PairwiseDistance()(t(a), t(b)).numpy(), d, rtol=1e-5)
    np.testing.assert_allclose(F.pairwise_distance(t(a), t(b), p=1, keepdim=True).numpy(),
                               np.abs(a - b + 1e-6).sum(-1, keepdims=True), rtol=1e-5)
    gradcheck(lambda x, y: F.cosine_similarity(x, y, axis=1), a, b)
    gradcheck(lambda x: F.normalize(x, axis=1), a)
    gradcheck(lambda x, y: F.pairwise_distance(x, y, 3.0), a, b)
    if torch is not None:
        np.testing.assert_allclose(F.pairwise_distance(t(a), t(b)).numpy(),
                                   TF.pairwise_distance(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-5)


def test_ranking_square_log_focal_losses():
    x, y = RNG.standard_normal(6), RNG.standard_normal(6)
    lab = np.sign(RNG.standard_normal(6))
    ref = np.maximum(0, -lab * (x - y) + 0.3)
    np.testing.assert_allclose(nn.MarginRankingLoss(0.3)(t(x), t(y), t(lab)).numpy(), ref.mean(), rtol=1e-5)
    np.testing.assert_allclose(F.margin_ranking_loss(t(x), t(y), t(lab), 0.3, "none").numpy(), ref, rtol=1e-5)
    gradcheck(lambda a, b: F.margin_ranking_loss(a, b, t(lab, dtype=np.float64), 0.3, "sum"), x, y)
    np.testing.assert_allclose(F.square_error_cost(t(x), t(y)).numpy(), (x - y) ** 2, rtol=1e-5)
    p, q = RNG.uniform(0.05, 0.95, (5, 1)), RNG.integers(0, 2, (5, 1)).astype(np.float64)
    ref = -q * np.log(p + 1e-4) - (1 - q) * np.log(1 - p + 1e-4)
    np.testing.assert_allclose(F.log_loss(t(p), t(q)).numpy(), ref, rtol=1e-5)
    logit = RNG.standard_normal((4, 3))
    lab = RNG.integers(0, 2, (4, 3)).astype(np.float64)
    pr = 1 / (1 + np.exp(-logit))
    ce = -(lab * np.log(pr) + (1 - lab) * np.log(1 - pr))
    p_t = pr * lab + (1 - pr) * (1 - lab)
    a_t = 0.25 * lab + 0.75 * (1 - lab)
    ref = (a_t * (1 - p_t) ** 2 * ce).sum() / 2.0
    got = F.sigmoid_focal_loss(t(logit), t(lab), normalizer=t([2.0]), reduction="sum").numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    gradcheck(lambda v: F.sigmoid_focal_loss(v, t(lab, dtype=np.float64), reduction="mean"), logit)


def test_softmax_with_cross_entropy_keeps_the_axis():
    logits = RNG.standard_normal((4, 5))
    lab = np.array([[1], [0], [4], [2]], dtype=np.int64)
    loss, sm = F.softmax_with_cross_entropy(t(logits), crew.to_tensor(lab), return_softmax=True)
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    assert loss.shape == [4, 1]
    np.testing.assert_allclose(loss.numpy()[:, 0], -np.log(p[np.arange(4), lab[:, 0]]), rtol=1e-5)
    np.testing.assert_allclose(sm.numpy(), p, rtol=1e-5)
    soft = p[::-1].copy()
    loss = F.softmax_with_cross_entropy(t(logits), t(soft), soft_label=True)
    np.testing.assert_allclose(loss.numpy()[:, 0], -(soft * np.log(p)).sum(1), rtol=1e-5)


def test_paddle_names_exist():
    for name in ["Conv1D", "Conv1DTranspose", "Conv2DTranspose", "AdaptiveAvgPool1D", "BatchNorm", "BatchNorm1D",
                 "BatchNorm3D", "LocalResponseNorm", "AlphaDropout", "PixelShuffle", "ELU", "SELU", "Swish",
                 "Mish", "LogSoftmax", "Softsign", "Hardsigmoid", "Hardtanh", "Tanhshrink", "MarginRankingLoss",
                 "CosineSimilarity", "PairwiseDistance", "MaxPool1D", "AvgPool1D"]:
        assert hasattr(nn, name), name
    for name in ["elu", "selu", "mish", "softsign", "hardsigmoid", "hardtanh", "conv2d", "max_pool2d",
                 "avg_pool2d", "adaptive_avg_pool1d", "dropout", "batch_norm", "normalize", "one_hot",
                 "pixel_shuffle", "softmax_with_cross_entropy", "margin_ranking_loss", "cosine_similarity",
                 "label_smooth", "unfold", "sigmoid_focal_loss", "square_error_cost", "log_loss", "conv1d",
                 "conv2d_transpose", "conv1d_transpose", "local_response_norm", "swish", "tanhshrink"]:
        assert hasattr(F, name), name


@pytest.mark.parametrize("groups", [1, 2, 6])
def test_group_norm_and_instance_norm_on_the_batch_norm_kernel(groups):
    x = RNG.standard_normal((3, 6, 4, 5)) * 2 + 1
    w, b = RNG.standard_normal(6), RNG.standard_normal(6)
    layer = nn.GroupNorm(groups, 6)
    assert type(layer).__module__.endswith("layers_extra")
    r = x.reshape(3, groups, -1)
    ref = ((r - r.mean(2, keepdims=True)) / np.sqrt(r.var(2, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(layer(t(x)).numpy(), ref, rtol=1e-4, atol=1e-5)
    xt, wt, bt = t(x, True), t(w, True), t(b, True)
    y = F.group_norm(xt, groups, 1e-5, wt, bt)
    np.testing.assert_allclose(y.numpy(), ref * w.reshape(1, 6, 1, 1) + b.reshape(1, 6, 1, 1), rtol=1e-4, atol=1e-4)
    gradcheck(lambda v, a, c: F.group_norm(v, groups, 1e-5, a, c), x[:2, :, :2, :3], w, b, rtol=1e-4, atol=1e-6)
    if torch is not None:
        gy = RNG.standard_normal(x.shape)
        (y * t(gy)).sum().backward()
        X, W, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
        (TF.group_norm(X, groups, W, B, 1e-5) * torch.tensor(gy)).sum().backward()
        np.testing.assert_allclose(xt.grad.numpy(), X.grad.numpy(), rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(wt.grad.numpy(), W.grad.numpy(), rtol=1e-3, atol=1e-3)
    if groups == 6:
        inn = nn.InstanceNorm2D(6)
        assert sorted(inn.state_dict().keys()) == ["bias", "scale"]
        np.testing.assert_allclose(inn(t(x)).numpy(), ref, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(F.instance_norm(t(x)).numpy(), ref, rtol=1e-4, atol=1e-5)


def np_resize_matrix(n_in, n_out, mode, align_corners, align_mode):
    """Paddle 2.4's index rules, written out for the reference."""
    m = np.zeros((n_out, n_in))
    ratio = (n_in - 1) / (n_out - 1) if align_corners and n_out > 1 else n_in / n_out
    for i in range(n_out):
        if mode == "nearest":
            m[i, min(int(round(i * ratio)) if align_corners else int(math.floor(i * ratio)), n_in - 1)] = 1
            continue
        src = i * ratio if (align_corners or align_mode == 1) else max((i + 0.5) * ratio - 0.5, 0.0)
        j0 = min(int(math.floor(src)), n_in - 1)
        m[i, j0] += 1 - (src - j0)
        m[i, min(j0 + 1, n_in - 1)] += src - j0
    return m


@pytest.mark.parametrize("mode,size,align_corners,align_mode", [
    ("nearest", (8, 9), False, 0),   # integer upscale: oneDNN
    ("nearest", (3, 5), False, 0),   # downsample: resize matrices
    ("bilinear", (7, 13), False, 0),  # oneDNN, fractional ratios too
    ("bilinear", (2, 2), False, 0),
    ("bilinear", (7, 13), True, 0),   # resize matrices
    ("bilinear", (6, 6), False, 1),
])
def test_interpolate_matches_paddle_rules_and_gradients(mode, size, align_corners, align_mode):
    x = RNG.standard_normal((2, 3, 4, 3))
    mh = np_resize_matrix(4, size[0], mode, align_corners, align_mode)
    mw = np_resize_matrix(3, size[1], mode, align_corners, align_mode)
    ref = np.einsum("ih,nchw,jw->ncij", mh, x, mw)
    xt = t(x, True)
    y = F.interpolate(xt, size=list(size), mode=mode, align_corners=align_corners, align_mode=align_mode)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)
    gy = RNG.standard_normal(ref.shape)
    (y * t(gy)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.einsum("ih,ncij,jw->nchw", mh, gy, mw), rtol=1e-4, atol=1e-5)
    if torch is not None and not (mode == "bilinear" and align_mode == 1 and not align_corners):
        ty = TF.interpolate(torch.tensor(x), size=size, mode=mode,
                            align_corners=align_corners if mode == "bilinear" else None)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-5, atol=1e-6)


def test_upsample_layers_and_scale_factor():
    x = RNG.standard_normal((1, 2, 3, 4))
    near = nn.UpsamplingNearest2D(scale_factor=2)(t(x)).numpy()
    np.testing.assert_allclose(near, x.repeat(2, 2).repeat(2, 3), rtol=1e-6)
    bil = nn.Upsample(scale_factor=[2, 3], mode="bilinear")(t(x))
    assert bil.shape == [1, 2, 6, 12]
    ref = np.einsum("ih,nchw,jw->ncij", np_resize_matrix(3, 6, "bilinear", False, 0), x,
                    np_resize_matrix(4, 12, "bilinear", False, 0))
    np.testing.assert_allclose(bil.numpy(), ref, rtol=1e-5, atol=1e-6)
    ac = nn.UpsamplingBilinear2D(size=[5, 7])(t(x)).numpy()
    ref = np.einsum("ih,nchw,jw->ncij", np_resize_matrix(3, 5, "bilinear", True, 0), x,
                    np_resize_matrix(4, 7, "bilinear", True, 0))
    np.testing.assert_allclose(ac, ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="NHWC"):
        F.interpolate(t(x), scale_factor=2, data_format="NHWC")


def test_interpolate_runs_onednn_where_its_rules_are_paddles(monkeypatch):
    import crew.nn.functional_conv as fx
    calls = []

    class Spy:
        def __getattr__(self, name):
            fn = getattr(crew._C.nn.functional, name)
            if name == "resample2d":
                return lambda *a: calls.append(a[1:]) or fn(*a)
            return fn

    monkeypatch.setattr(fx, "_f", Spy())
    x = t(RNG.standard_normal((1, 1, 4, 4)))
    F.interpolate(x, scale_factor=2)
    F.interpolate(x, size=[7, 5], mode="bilinear")
    F.interpolate(x, size=[6, 6], mode="nearest")  # 1.5x: Paddle's floor rule, resize matrices
    F.interpolate(x, size=[7, 5], mode="bilinear", align_corners=True)
    assert calls == [([8, 8], False), ([7, 5], True)]


def test_zero_pad_2d_pads_with_zeros_and_passes_the_gradient():
    x = t(np.arange(4.0).reshape(1, 1, 2, 2), grad=True)
    out = nn.ZeroPad2D([1, 0, 0, 1])(x)  # left, right, top, bottom
    np.testing.assert_array_equal(out.numpy()[0, 0], [[0, 0, 1], [0, 2, 3], [0, 0, 0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((1, 1, 2, 2)))
    assert nn.ZeroPad2D(2)(x).shape == [1, 1, 6, 6]
    with pytest.raises(ValueError, match="data_format"):
        nn.ZeroPad2D(1, data_format="NHWC")


def test_unfold_layer_is_f_unfold_and_create_parameter_is_paddles():
    x = t(np.arange(2 * 3 * 4 * 4.0).reshape(2, 3, 4, 4))
    np.testing.assert_array_equal(nn.Unfold([2, 2], strides=2)(x).numpy(), F.unfold(x, [2, 2], 2).numpy())
    assert nn.Unfold(3, paddings=1)(x).shape == [2, 27, 16]
    w = crew.create_parameter([3, 2], "float32")
    assert not w.stop_gradient and w.shape == [3, 2] and w.dtype == crew.float32
    b = crew.create_parameter([2], "float64", name="fc.b", is_bias=True)
    assert b.name == "fc.b" and b.numpy().tolist() == [0, 0] and b.dtype == crew.float64
