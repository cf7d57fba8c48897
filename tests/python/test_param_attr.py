"""ParamAttr, nn.initializer and regularizers: Paddle's fans and defaults, weight_attr /
bias_attr on the built-in layers, learning-rate multipliers and regularizers in the
optimizers (checked against the update computed by hand)."""
import math

import numpy as np
import pytest

import crew as paddle
from crew import nn
from crew.nn import initializer as I
from crew.regularizer import L1Decay, L2Decay


def tensor(shape):
    return paddle.to_tensor(np.zeros(shape, np.float32), stop_gradient=False)


@pytest.mark.parametrize("shape,fans", [([30, 20], (30, 20)), ([8, 4, 3, 3], (36, 72)), ([5], (5, 5))])
def test_fans_follow_paddle(shape, fans):
    assert I._fans(shape) == fans


def test_initializers_draw_from_paddles_distributions():
    np.random.seed(0)
    w = I.XavierUniform()(tensor([300, 200])).numpy()
    limit = math.sqrt(6.0 / 500)
    assert w.min() >= -limit and w.max() <= limit and w.max() > 0.95 * limit
    w = I.XavierNormal()(tensor([300, 200])).numpy()
    assert abs(w.std() - math.sqrt(2.0 / 500)) < 0.02 * math.sqrt(2.0 / 500) * 5
    w = I.KaimingNormal()(tensor([64, 32, 3, 3])).numpy()  # fan_in = 32 * 9
    assert abs(w.std() - math.sqrt(2.0 / 288)) < 0.03 * math.sqrt(2.0 / 288)
    w = I.KaimingUniform()(tensor([64, 32, 3, 3])).numpy()
    limit = math.sqrt(2.0) * math.sqrt(3.0 / 288)
    assert w.min() >= -limit and w.max() <= limit and w.max() > 0.95 * limit
    w = I.TruncatedNormal(mean=1.0, std=0.5)(tensor([10000])).numpy()
    assert w.min() >= 0.0 and w.max() <= 2.0 and abs(w.mean() - 1.0) < 0.02
    w = I.Uniform(-0.1, 0.3)(tensor([10000])).numpy()
    assert w.min() >= -0.1 and w.max() <= 0.3
    w = I.Normal(2.0, 0.1)(tensor([10000])).numpy()
    assert abs(w.mean() - 2.0) < 0.01
    np.testing.assert_array_equal(I.Constant(0.5)(tensor([3])).numpy(), [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(I.Assign([[1, 2], [3, 4]])(tensor([2, 2])).numpy(), [[1, 2], [3, 4]])


@pytest.mark.parametrize("shape", [[6, 10], [10, 6], [4, 2, 3, 3]])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = I.Orthogonal(gain=2.0)(tensor(shape)).numpy().reshape(shape[0], -1) / 2.0
    gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-5)


def test_weight_attr_initializes_every_layer():
    c = lambda v: paddle.ParamAttr(initializer=I.Constant(v))  # noqa: E731
    layers = [nn.Linear(3, 4, weight_attr=c(0.5), bias_attr=c(0.25)),
              nn.Conv2D(2, 4, 3, weight_attr=c(0.5), bias_attr=c(0.25)),
              nn.BatchNorm2D(4, weight_attr=c(0.5), bias_attr=c(0.25)),
              nn.SyncBatchNorm(4, weight_attr=c(0.5), bias_attr=c(0.25)),
              nn.LayerNorm(4, weight_attr=c(0.5), bias_attr=c(0.25)),
              nn.GroupNorm(2, 4, weight_attr=c(0.5), bias_attr=c(0.25))]
    for layer in layers:
        assert np.all(layer.weight.numpy() == 0.5), type(layer).__name__
        assert np.all(layer.bias.numpy() == 0.25), type(layer).__name__
    emb = nn.Embedding(5, 3, weight_attr=I.Constant(2.0))  # an initializer alone is accepted
    assert np.all(emb.weight.numpy() == 2.0)
    prelu = nn.PReLU(3, weight_attr=c(0.1))
    assert np.allclose(prelu.weight.numpy(), 0.1)


def test_bias_attr_false_means_no_bias():
    assert [n for n, _ in nn.Linear(3, 4, bias_attr=False).named_parameters()] == ["weight"]
    assert [n for n, _ in nn.Conv2D(3, 4, 3, bias_attr=False).named_parameters()] == ["weight"]
    assert [n for n, _ in nn.GroupNorm(1, 4, bias_attr=False).named_parameters()] == ["weight"]
    assert sorted(nn.InstanceNorm2D(4).state_dict()) == ["bias", "scale"]  # Paddle's names
    ln = nn.LayerNorm(4, weight_attr=False, bias_attr=False)
    assert ln.state_dict() == {} and ln.weight is None and ln.bias is None
    x = np.random.randn(3, 4).astype(np.float32)
    want = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(paddle.to_tensor(x)).numpy(), want, rtol=1e-4, atol=1e-5)
    bn = nn.BatchNorm2D(4, weight_attr=False)
    assert bn.weight.stop_gradient and np.all(bn.weight.numpy() == 1.0)


def test_param_attr_records_name_and_trainable():
    fc = nn.Linear(2, 2, weight_attr=paddle.ParamAttr(name="fc_w", trainable=False, learning_rate=0.5,
                                                      regularizer=L2Decay(0.1)))
    assert fc.weight.name == "fc_w" and fc.weight.stop_gradient and not fc.weight.trainable
    assert fc.weight.optimize_attr == {"learning_rate": 0.5}
    assert isinstance(fc.weight.regularizer, L2Decay)
    layer = nn.Layer()
    p = layer.create_parameter([2, 3], attr=paddle.ParamAttr(initializer=I.Constant(3.0)))
    assert np.all(p.numpy() == 3.0) and not p.stop_gradient
    assert layer.create_parameter([2], attr=False) is None
    assert np.all(layer.create_parameter([4], is_bias=True).numpy() == 0.0)


def _two_params(attr_a, attr_b):
    a = nn.Linear(3, 1, weight_attr=attr_a, bias_attr=False)
    b = nn.Linear(3, 1, weight_attr=attr_b, bias_attr=False)
    np.copyto(a.weight.numpy(), np.array([[1.0], [-2.0], [0.5]], np.float32))
    np.copyto(b.weight.numpy(), a.weight.numpy())
    x = paddle.to_tensor(np.array([[1.0, 2.0, 3.0]], np.float32))
    return a, b, x


def _step(opt, layers, x):
    loss = paddle.sum(layers[0](x)) + paddle.sum(layers[1](x))
    loss.backward()
    grads = [l.weight.grad.numpy().copy() for l in layers]
    before = [l.weight.numpy().copy() for l in layers]
    opt.step()
    opt.clear_grad()
    return grads, before, [l.weight.numpy().copy() for l in layers]


@pytest.mark.parametrize("make", [lambda ps: paddle.optimizer.SGD(0.1, parameters=ps),
                                  lambda ps: paddle.optimizer.Momentum(0.1, parameters=ps),
                                  lambda ps: paddle.optimizer.Adam(0.1, parameters=ps),
                                  lambda ps: paddle.optimizer.AdamW(0.1, parameters=ps)])
def test_learning_rate_multiplier_scales_the_update(make):
    a, b, x = _two_params(paddle.ParamAttr(learning_rate=0.25), None)
    opt = make(a.parameters() + b.parameters())
    for _ in range(3):
        _, before, after = _step(opt, (a, b), x)
        np.testing.assert_allclose(after[0] - before[0], 0.25 * (after[1] - before[1]), rtol=1e-5, atol=1e-7)
        np.copyto(a.weight.numpy(), b.weight.numpy())  # same start for the next step


def test_param_regularizer_replaces_weight_decay_and_l1_adds_sign():
    a, b, x = _two_params(paddle.ParamAttr(regularizer=L2Decay(0.1)), paddle.ParamAttr(regularizer=L1Decay(0.2)))
    c = nn.Linear(3, 1, bias_attr=False)
    np.copyto(c.weight.numpy(), a.weight.numpy())
    opt = paddle.optimizer.SGD(0.5, parameters=a.parameters() + b.parameters() + c.parameters(), weight_decay=0.3)
    loss = paddle.sum(a(x)) + paddle.sum(b(x)) + paddle.sum(c(x))
    loss.backward()
    w, g = a.weight.numpy().copy(), a.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(a.weight.numpy(), w - 0.5 * (g + 0.1 * w), rtol=1e-6)
    np.testing.assert_allclose(b.weight.numpy(), w - 0.5 * (g + 0.2 * np.sign(w)), rtol=1e-6)
    np.testing.assert_allclose(c.weight.numpy(), w - 0.5 * (g + 0.3 * w), rtol=1e-6)


def test_weight_decay_as_l1decay_and_l2decay_objects():
    for decay, term in ((L2Decay(0.1), lambda w: 0.1 * w), (L1Decay(0.1), lambda w: 0.1 * np.sign(w))):
        a, b, x = _two_params(None, None)
        opt = paddle.optimizer.SGD(0.5, parameters=a.parameters(), weight_decay=decay)
        paddle.sum(a(x)).backward()
        w, g = a.weight.numpy().copy(), a.weight.grad.numpy().copy()
        opt.step()
        np.testing.assert_allclose(a.weight.numpy(), w - 0.5 * (g + term(w)), rtol=1e-6)


def test_clipping_comes_before_the_regularizer():
    a, b, x = _two_params(paddle.ParamAttr(regularizer=L2Decay(0.1)), None)
    opt = paddle.optimizer.SGD(1.0, parameters=a.parameters(), grad_clip=nn.ClipGradByGlobalNorm(0.5))
    paddle.sum(a(x)).backward()
    w, g = a.weight.numpy().copy(), a.weight.grad.numpy().copy()
    opt.step()
    clipped = g * 0.5 / np.linalg.norm(g)
    np.testing.assert_allclose(a.weight.numpy(), w - (clipped + 0.1 * w), rtol=1e-5)


def test_plain_parameters_keep_the_cpp_optimizer():
    a, _, _ = _two_params(None, None)
    assert isinstance(paddle.optimizer.SGD(0.1, parameters=a.parameters()), paddle.optimizer.Optimizer)


def test_paddle_seed_makes_python_initializers_repeatable():
    def make():
        paddle.seed(7)
        attr = paddle.ParamAttr(initializer=I.XavierUniform())
        return nn.Linear(6, 4, weight_attr=attr).weight.numpy(), nn.Linear(6, 4).weight.numpy()

    (a_init, a_default), (b_init, b_default) = make(), make()
    np.testing.assert_array_equal(a_init, b_init)
    np.testing.assert_array_equal(a_default, b_default)
