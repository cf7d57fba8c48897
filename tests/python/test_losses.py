"""Losses as layers and functions (Paddle 2.4's options): values against NumPy references,
gradients against central differences, and Paddle's documented example outputs."""
import numpy as np
import pytest

import crew as paddle
import crew.nn.functional as F

RNG = np.random.default_rng(7)


def t(a, dtype=None, grad=False):
    a = np.asarray(a)
    if dtype is not None:
        a = a.astype(dtype)
    return paddle.to_tensor(a, dtype=str(a.dtype) if a.dtype.kind == "f" else None, stop_gradient=not grad)


def value(x):
    return x.numpy()


def gradcheck(fn, x0, eps=1e-6, tol=1e-5):
    """fn(tensor) -> loss tensor of shape [1]; compares autograd's gradient with central
    differences of fn over float64 x0."""
    x = t(x0, np.float64, grad=True)
    out = fn(x)
    out.backward()
    analytic = x.grad.numpy()
    numeric = np.zeros_like(x0, dtype=np.float64)
    flat = numeric.reshape(-1)
    base = np.asarray(x0, dtype=np.float64)
    for i in range(base.size):
        plus, minus = base.copy().reshape(-1), base.copy().reshape(-1)
        plus[i] += eps
        minus[i] -= eps
        fp = value(fn(t(plus.reshape(base.shape)))).sum()
        fm = value(fn(t(minus.reshape(base.shape)))).sum()
        flat[i] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=tol, atol=tol)


def reduce_np(loss, reduction):
    return {"mean": np.mean, "sum": np.sum}.get(reduction, lambda v: v)(loss)


def log_softmax_np(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ---- Paddle's documented examples ----
def test_paddle_doc_examples():
    x, y = t([0.5, 0.6, 0.7], "float32"), t([1.0, 0.0, 1.0], "float32")
    np.testing.assert_allclose(value(F.binary_cross_entropy(x, y)), [0.65537095], rtol=1e-5)
    np.testing.assert_allclose(value(paddle.nn.BCELoss()(x, y)), [0.65537095], rtol=1e-5)
    logit = t([5.0, 1.0, 3.0], "float32")
    np.testing.assert_allclose(value(F.binary_cross_entropy_with_logits(logit, y)), [0.45618808], rtol=1e-5)
    np.testing.assert_allclose(value(paddle.nn.BCEWithLogitsLoss()(logit, y)), [0.45618808], rtol=1e-5)
    inp, lab = t([[1.5, 0.8], [0.2, 1.3]], "float32"), t([[1.7, 1.0], [0.4, 0.5]], "float32")
    np.testing.assert_allclose(value(paddle.nn.L1Loss()(inp, lab)), [0.35], rtol=1e-5)
    np.testing.assert_allclose(value(paddle.nn.L1Loss(reduction="sum")(inp, lab)), [1.4], rtol=1e-5)
    np.testing.assert_allclose(value(paddle.nn.L1Loss(reduction="none")(inp, lab)),
                               [[0.20000005, 0.19999999], [0.2, 0.79999995]], rtol=1e-5)
    np.testing.assert_allclose(value(paddle.nn.MSELoss()(t([1.5], "float32"), t([1.7], "float32"))),
                               [0.04000002], rtol=1e-5)


# ---- cross_entropy ----
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_cross_entropy_hard_labels(reduction, weighted, ignore_index):
    x = RNG.normal(size=(6, 4))
    lab = np.array([0, 1, 3, 1, 2, -100 if ignore_index == -100 else 1])
    w = np.array([0.5, 2.0, 1.0, 3.0]) if weighted else None
    counted = lab != ignore_index
    safe = np.where(counted, lab, 0)
    row_w = (w[safe] if weighted else np.ones(6)) * counted
    per = -log_softmax_np(x)[np.arange(6), safe] * row_w
    expected = {"mean": per.sum() / row_w.sum(), "sum": per.sum(), "none": per}[reduction]
    kwargs = dict(weight=t(w) if weighted else None, ignore_index=ignore_index, reduction=reduction)
    got = F.cross_entropy(t(x), t(lab), **kwargs)
    np.testing.assert_allclose(value(got).reshape(np.shape(expected)), expected, rtol=1e-10)
    assert list(got.shape) == ([6] if reduction == "none" else [1])
    layer = paddle.nn.CrossEntropyLoss(**kwargs)
    np.testing.assert_allclose(value(layer(t(x), t(lab))).reshape(np.shape(expected)), expected, rtol=1e-10)
    gradcheck(lambda v: paddle.sum(F.cross_entropy(v, t(lab), **kwargs)), x)


def test_cross_entropy_label_n1_keeps_its_shape_and_float32_default():
    x = RNG.normal(size=(5, 3)).astype(np.float32)
    lab = np.array([[0], [2], [1], [1], [0]])
    out = F.cross_entropy(t(x), t(lab), reduction="none")
    assert list(out.shape) == [5, 1]
    np.testing.assert_allclose(value(out)[:, 0], -log_softmax_np(x)[np.arange(5), lab[:, 0]], rtol=1e-5)
    assert list(F.cross_entropy(t(x), t(lab)).shape) == [1]


@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_soft_labels(weighted):
    x = RNG.normal(size=(4, 5))
    y = RNG.random(size=(4, 5))
    y /= y.sum(axis=1, keepdims=True)
    w = np.array([1.0, 2.0, 0.5, 1.5, 1.0]) if weighted else None
    per = -(y * log_softmax_np(x)).sum(axis=1)
    if weighted:
        rw = y @ w
        expected = (per * rw).sum() / rw.sum()
    else:
        expected = per.mean()
    got = F.cross_entropy(t(x), t(y), soft_label=True, weight=t(w) if weighted else None)
    np.testing.assert_allclose(value(got), [expected], rtol=1e-10)
    none = F.cross_entropy(t(x), t(y), soft_label=True, reduction="none")
    assert list(none.shape) == [4, 1]
    gradcheck(lambda v: F.cross_entropy(v, t(y), soft_label=True, weight=t(w) if weighted else None), x)


def test_cross_entropy_axis_and_use_softmax():
    x = RNG.normal(size=(2, 3, 4))  # classes on axis 1
    lab = RNG.integers(0, 3, size=(2, 1, 4))
    per = -log_softmax_np(x, axis=1)[np.arange(2)[:, None], lab[:, 0], np.arange(4)[None, :]]
    got = F.cross_entropy(t(x), t(lab), axis=1, reduction="none")
    assert list(got.shape) == [2, 1, 4]
    np.testing.assert_allclose(value(got)[:, 0], per, rtol=1e-10)
    np.testing.assert_allclose(value(F.cross_entropy(t(x), t(lab), axis=1)), [per.mean()], rtol=1e-10)
    gradcheck(lambda v: F.cross_entropy(v, t(lab), axis=1), x)
    p = np.exp(log_softmax_np(x[:, :, 0]))
    lab2 = np.array([2, 0])
    got = F.cross_entropy(t(p), t(lab2), use_softmax=False)
    np.testing.assert_allclose(value(got), [-np.log(p[np.arange(2), lab2]).mean()], rtol=1e-10)
    gradcheck(lambda v: F.cross_entropy(v, t(lab2), use_softmax=False, ignore_index=0), p)


def test_cross_entropy_rejects_bad_arguments():
    x = t(RNG.normal(size=(3, 4)))
    with pytest.raises(IndexError, match="outside"):
        F.cross_entropy(x, t([0, 4, 1]), ignore_index=1)
    with pytest.raises(ValueError, match="reduction"):
        paddle.nn.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError, match="weight"):
        F.cross_entropy(x, t([0, 1, 1]), weight=t([1.0, 2.0]))
    # a NumPy label would silently drop the graph through NumPy's operators: refused
    with pytest.raises(TypeError, match="binary_cross_entropy: label must be a crew.Tensor"):
        F.binary_cross_entropy(t([0.5]), np.array([1.0]))
    with pytest.raises(TypeError, match="pos_weight must be a crew.Tensor"):
        F.binary_cross_entropy_with_logits(t([0.5]), t([1.0]), pos_weight=[2.0])
    with pytest.raises(TypeError, match="l1_loss: label"):
        F.l1_loss(t([0.5]), [1.0])


# ---- nll_loss ----
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    logp = log_softmax_np(RNG.normal(size=(5, 3)))
    lab = np.array([0, 2, 1, 2, 0])
    w = np.array([0.2, 1.0, 3.0])
    counted = lab != 2
    rw = w[np.where(counted, lab, 0)] * counted
    per = -logp[np.arange(5), lab] * rw
    expected = {"mean": per.sum() / rw.sum(), "sum": per.sum(), "none": per}[reduction]
    layer = paddle.nn.NLLLoss(weight=t(w), ignore_index=2, reduction=reduction)
    np.testing.assert_allclose(value(layer(t(logp), t(lab))).reshape(np.shape(expected)), expected, rtol=1e-10)
    gradcheck(lambda v: paddle.sum(F.nll_loss(v, t(lab), weight=t(w), ignore_index=2, reduction=reduction)), logp)
    # [N, C, d] input with [N, d] labels
    x = log_softmax_np(RNG.normal(size=(2, 3, 4)), axis=1)
    lab3 = RNG.integers(0, 3, size=(2, 4))
    ref = -np.take_along_axis(x, lab3[:, None, :], axis=1)[:, 0]
    np.testing.assert_allclose(value(F.nll_loss(t(x), t(lab3), reduction="none")), ref, rtol=1e-10)


# ---- regression and binary losses ----
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_smooth_l1_mse(reduction):
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    d = x - y
    l1 = value(F.l1_loss(t(x), t(y), reduction))
    np.testing.assert_allclose(l1.reshape(-1), np.reshape(reduce_np(np.abs(d), reduction), -1), rtol=1e-10)
    gradcheck(lambda v: paddle.sum(F.l1_loss(v, t(y), reduction)), x)
    for delta in (1.0, 0.5):
        a = np.abs(d)
        huber = np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
        got = paddle.nn.SmoothL1Loss(reduction=reduction, delta=delta)(t(x), t(y))
        np.testing.assert_allclose(value(got).reshape(-1), np.reshape(reduce_np(huber, reduction), -1), rtol=1e-10)
        gradcheck(lambda v: paddle.sum(F.smooth_l1_loss(v, t(y), reduction, delta)), x)
    mse = paddle.nn.MSELoss(reduction)(t(x), t(y))
    np.testing.assert_allclose(value(mse).reshape(-1), np.reshape(reduce_np(d * d, reduction), -1), rtol=1e-10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    p = RNG.uniform(0.05, 0.95, size=(4, 3))
    y = RNG.integers(0, 2, size=(4, 3)).astype(np.float64)
    w = RNG.uniform(0.5, 2.0, size=(4, 3))
    ref = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    got = paddle.nn.BCELoss(weight=t(w), reduction=reduction)(t(p), t(y))
    np.testing.assert_allclose(value(got).reshape(-1), np.reshape(reduce_np(ref, reduction), -1), rtol=1e-10)
    gradcheck(lambda v: paddle.sum(F.binary_cross_entropy(v, t(y), t(w), reduction)), p)
    # log clamped at -100, as Paddle's bce kernel
    np.testing.assert_allclose(value(F.binary_cross_entropy(t([0.0, 1.0]), t([1.0, 0.0]), reduction="none")),
                               [100.0, 100.0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        F.binary_cross_entropy(t([1.5]), t([1.0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction):
    x = RNG.normal(scale=3.0, size=(4, 3))
    y = RNG.uniform(size=(4, 3))
    w = RNG.uniform(0.5, 2.0, size=(4, 1))
    pw = np.array([1.0, 2.0, 0.5])
    sig = 1 / (1 + np.exp(-x))
    # Paddle scales the whole term by (pos_weight - 1) label + 1 (PyTorch's form for 0/1 labels)
    ref = -(y * np.log(sig) + (1 - y) * np.log(1 - sig)) * ((pw - 1) * y + 1) * w
    layer = paddle.nn.BCEWithLogitsLoss(weight=t(w), reduction=reduction, pos_weight=t(pw))
    np.testing.assert_allclose(value(layer(t(x), t(y))).reshape(-1), np.reshape(reduce_np(ref, reduction), -1),
                               rtol=1e-9)
    gradcheck(lambda v: paddle.sum(F.binary_cross_entropy_with_logits(v, t(y), t(w), reduction, t(pw))), x)
    big = F.binary_cross_entropy_with_logits(t([800.0, -800.0]), t([0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(value(big), [800.0, 800.0])  # finite where sigmoid saturates


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_div(reduction):
    x = log_softmax_np(RNG.normal(size=(3, 4)))
    y = RNG.uniform(size=(3, 4))
    y[0, 1] = 0.0
    ref = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), 0.0)
    expected = ref.sum() / 3 if reduction == "batchmean" else reduce_np(ref, reduction)
    got = paddle.nn.KLDivLoss(reduction)(t(x), t(y))
    np.testing.assert_allclose(value(got).reshape(-1), np.reshape(expected, -1), rtol=1e-10)
    gradcheck(lambda v: paddle.sum(F.kl_div(v, t(y), reduction)), x)


def test_losses_train_a_layer():
    """A loss layer drives an optimizer: the loss of a linear classifier falls."""
    paddle.seed(1)
    net = paddle.nn.Linear(4, 3)
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=net.parameters())
    x = t(RNG.normal(size=(32, 4)), "float32")
    lab = t(RNG.integers(0, 3, size=(32, 1)))
    loss_fn = paddle.nn.CrossEntropyLoss(weight=t([1.0, 2.0, 1.0], "float32"))
    first = None
    for _ in range(30):
        loss = loss_fn(net(x), lab)
        loss.backward()
        opt.step()
        opt.clear_grad()
        first = first if first is not None else float(value(loss)[0])
    assert float(value(loss)[0]) < first
