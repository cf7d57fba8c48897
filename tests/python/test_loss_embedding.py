"""hinge_embedding_loss, cosine_embedding_loss, triplet_margin_loss and their layers
(python/crew/nn/loss_embedding.py): Paddle's documented examples, NumPy references for every
reduction, gradients against central differences, and errors for bad arguments."""
import numpy as np
import pytest

import crew as paddle
import crew.nn as nn
import crew.nn.functional as F


def t(values, dtype="float64", grad=False):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=not grad)


def numeric_gradient(fn, arrays, k, eps=1e-6):
    grad = np.zeros_like(arrays[k])
    for i in np.ndindex(arrays[k].shape):
        hi, lo = [a.copy() for a in arrays], [a.copy() for a in arrays]
        hi[k][i] += eps
        lo[k][i] -= eps
        grad[i] = (fn(*[t(a) for a in hi]).numpy().sum() - fn(*[t(a) for a in lo]).numpy().sum()) / (2 * eps)
    return grad


def check_gradients(fn, *arrays):
    inputs = [t(a, grad=True) for a in arrays]
    fn(*inputs).sum().backward()
    for k in range(len(arrays)):
        np.testing.assert_allclose(inputs[k].grad.numpy(), numeric_gradient(fn, arrays, k), rtol=1e-5, atol=1e-6)


def test_hinge_embedding_loss_as_paddles_example():
    x = t([[1, -2, 3], [0, -1, 2], [1, 0, 1]], "float32")
    label = t([[-1, 1, -1], [1, 1, 1], [1, -1, 1]], "float32")
    np.testing.assert_allclose(F.hinge_embedding_loss(x, label, reduction="none").numpy(),
                               [[0, -2, 0], [0, -1, 2], [1, 1, 1]])
    np.testing.assert_allclose(nn.HingeEmbeddingLoss()(x, label).numpy(), [2 / 9], rtol=1e-6)
    np.testing.assert_allclose(nn.HingeEmbeddingLoss(margin=2.0, reduction="sum")(x, label).numpy(), [4])


def test_cosine_embedding_loss_as_paddles_example_and_numpy():
    a = np.array([[1.6, 1.2, -0.5], [3.2, 2.6, -5.8]])
    b = np.array([[0.5, 0.5, -1.8], [2.3, -1.4, 1.1]])
    label = t([1, -1], "int64")
    np.testing.assert_allclose(F.cosine_embedding_loss(t(a), t(b), label, 0.5, "none").numpy(), [0.42310387, 0],
                               rtol=1e-6)
    np.testing.assert_allclose(nn.CosineEmbeddingLoss(0.5)(t(a), t(b), label).numpy(), [0.21155193], rtol=1e-6)
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    ref = np.where([True, False], 1 - cos, np.maximum(cos + 0.8, 0))  # margin -0.8: the negative pair counts
    np.testing.assert_allclose(F.cosine_embedding_loss(t(a), t(b), label, -0.8, "sum").numpy(), [ref.sum()],
                               rtol=1e-9)
    single = F.cosine_embedding_loss(t(a[0]), t(b[0]), t([1], "int64"), reduction="none")
    np.testing.assert_allclose(single.numpy(), 1 - cos[0], rtol=1e-9)


def triplet_reference(x, p, n, margin=1.0, norm=2, eps=1e-6, swap=False):
    def d(u, v):
        return (np.abs(u - v + eps) ** norm).sum(-1) ** (1 / norm)
    d_neg = np.minimum(d(x, n), d(p, n)) if swap else d(x, n)
    return np.maximum(d(x, p) - d_neg + margin, 0)


def test_triplet_margin_loss_as_paddles_example_and_numpy_with_swap_and_p():
    x = np.array([[1, 5, 3], [0, 3, 2], [1, 4, 1]], dtype=np.float64)
    p = np.array([[5, 1, 2], [3, 2, 1], [3, -1, 1]], dtype=np.float64)
    n = np.array([[2, 1, -3], [1, 1, -1], [4, -2, 1]], dtype=np.float64)
    np.testing.assert_allclose(F.triplet_margin_loss(t(x), t(p), t(n), reduction="none").numpy(),
                               [0, 0.57496595, 0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(nn.TripletMarginLoss()(t(x), t(p), t(n)).numpy(), [0.19165532], rtol=1e-6)
    for kwargs in ({"swap": True}, {"p": 1.0, "margin": 3.0}, {"p": 3.0, "swap": True, "margin": 4.0}):
        out = F.triplet_margin_loss(t(x), t(p), t(n), reduction="none", **kwargs)
        np.testing.assert_allclose(out.numpy(), triplet_reference(x, p, n, **{("norm" if k == "p" else k): v
                                                                             for k, v in kwargs.items()}), rtol=1e-9)


def test_gradients_match_central_differences():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    label = t([1, -1, 1, -1])
    check_gradients(lambda a: F.hinge_embedding_loss(a, t(np.sign(x + 0.1)), margin=0.5, reduction="none"), x)
    check_gradients(lambda a, b: F.cosine_embedding_loss(a, b, label, margin=-0.5), x, y)
    z = rng.standard_normal((4, 3)) * 3
    check_gradients(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=2.0, reduction="sum"), x, y, z)


def test_bad_arguments_are_named():
    x = t(np.ones((2, 3)))
    with pytest.raises(ValueError, match="reduction='avg'"):
        F.hinge_embedding_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="one entry per row"):
        F.cosine_embedding_loss(x, x, t([1, 1, 1]))
    with pytest.raises(ValueError, match="same shape"):
        F.triplet_margin_loss(x, x, t(np.ones((2, 4))))
    with pytest.raises(ValueError, match="margin must be in"):
        nn.CosineEmbeddingLoss(margin=2)
    with pytest.raises(TypeError, match="must be a crew.Tensor"):
        F.hinge_embedding_loss([1.0], x)
