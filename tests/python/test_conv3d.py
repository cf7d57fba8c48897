"""nn.Conv3D and F.conv3d (issue 30): values against a naive NumPy convolution, gradients
against finite differences, and both against torch where /usr/bin/python3 has it."""
import numpy as np
import pytest

import crew as paddle
import crew.nn.functional as F


def naive_conv3d(x, w, b, stride, pad, dil, groups):
    """Direct loops: x [N, C, D, H, W], w [O, C/g, kd, kh, kw], pad [f, b, t, bo, l, r]."""
    x = np.pad(x, [(0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (pad[4], pad[5])])
    n, c, *size = x.shape
    o, cg, *k = w.shape
    out_size = [(size[i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros([n, o] + out_size)
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        xs = x[:, g * cg:(g + 1) * cg]
        for idx in np.ndindex(*out_size):
            acc = 0.0
            for kk in np.ndindex(*k):
                pos = [idx[i] * stride[i] + kk[i] * dil[i] for i in range(3)]
                acc = acc + xs[:, :, pos[0], pos[1], pos[2]] @ w[oc, :, kk[0], kk[1], kk[2]]
            y[(slice(None), oc) + idx] = acc
    return y + (0 if b is None else b.reshape(1, -1, 1, 1, 1))


CASES = [
    (dict(), [0] * 6, (1, 1, 1), (1, 1, 1), 1),
    (dict(stride=2, padding=1), [1] * 6, (2, 2, 2), (1, 1, 1), 1),
    (dict(stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2), [1, 1, 0, 0, 2, 2], (1, 2, 1),
     (2, 1, 1), 2),
    (dict(padding=[[0, 0], [0, 0], [1, 0], [0, 1], [1, 1]]), [1, 0, 0, 1, 1, 1], (1, 1, 1), (1, 1, 1), 1),
]


@pytest.mark.parametrize("kwargs,pad,stride,dil,groups", CASES)
def test_conv3d_matches_a_naive_convolution(kwargs, pad, stride, dil, groups):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5, 4, 5)).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups, 3, 2, 2)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    got = F.conv3d(paddle.to_tensor(x), paddle.to_tensor(w), paddle.to_tensor(b), **kwargs).numpy()
    np.testing.assert_allclose(got, naive_conv3d(x, w, b, stride, pad, dil, groups), rtol=1e-4, atol=1e-4)


def test_conv3d_gradients_against_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 3, 3, 3))
    w = rng.standard_normal((2, 2, 2, 2, 2))
    b = rng.standard_normal(2)
    weights = rng.standard_normal((1, 2, 2, 2, 2))

    def f(xv, wv, bv):
        return float((naive_conv3d(xv, wv, bv, (1, 1, 1), [0] * 6, (1, 1, 1), 1) * weights).sum())

    tx, tw, tb = (paddle.to_tensor(a.astype(np.float32), stop_gradient=False) for a in (x, w, b))
    (F.conv3d(tx, tw, tb) * paddle.to_tensor(weights.astype(np.float32))).sum().backward()
    for k, (arr, t) in enumerate(((x, tx), (w, tw), (b, tb))):
        numeric = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            hi, lo = [a.copy() for a in (x, w, b)], [a.copy() for a in (x, w, b)]
            hi[k][i] += 1e-5
            lo[k][i] -= 1e-5
            numeric[i] = (f(*hi) - f(*lo)) / 2e-5
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=1e-3, atol=1e-3)


def test_conv3d_against_torch_values_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 6, 5, 7)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3, 2)).astype(np.float32)
    tx, tw = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(w, stop_gradient=False)
    y = F.conv3d(tx, tw, stride=(2, 1, 2), padding="SAME", groups=2)
    rx, rw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    padded = torch.nn.functional.pad(rx, (0, 1, 1, 1, 0, 1))  # SAME's pads, (w, h, d) pairs
    ry = torch.nn.functional.conv3d(padded, rw, stride=(2, 1, 2), groups=2)
    np.testing.assert_allclose(y.numpy(), ry.detach().numpy(), rtol=1e-4, atol=1e-4)
    (y * y).sum().backward()
    (ry * ry).sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), rx.grad.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(tw.grad.numpy(), rw.grad.numpy(), rtol=1e-3, atol=1e-3)


def test_conv3d_layer_as_paddles_example():
    x = paddle.uniform((2, 4, 8, 8, 8), dtype="float32", min=-1.0, max=1.0)
    conv = paddle.nn.Conv3D(4, 6, (3, 3, 3))
    y = conv(x)
    assert y.shape == [2, 6, 6, 6, 6]  # Paddle's documented output
    assert conv.weight.shape == [6, 4, 3, 3, 3] and conv.bias.shape == [6]
    assert np.abs(conv.bias.numpy()).max() == 0.0
    assert len(paddle.nn.Conv3D(4, 6, 3, bias_attr=False).parameters()) == 1
    with pytest.raises(ValueError, match="NCDHW"):
        paddle.nn.Conv3D(4, 6, 3, data_format="NDHWC")
    with pytest.raises(ValueError, match="divisible"):
        paddle.nn.Conv3D(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="depth"):
        F.conv3d(paddle.zeros([1, 1, 2, 4, 4]), paddle.zeros([1, 1, 3, 1, 1]))
