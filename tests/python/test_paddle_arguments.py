"""Paddle 2.4's arguments of functions crew already had (issue 30, item 5): each case is
Paddle's documented behaviour, where crew used to fail or, for argmax, silently differ."""
import numpy as np
import pytest

import crew as paddle
import crew.nn.functional as F


def arange(*shape):
    return paddle.to_tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


def test_argmax_without_axis_flattens_as_paddle():
    x = paddle.to_tensor(np.array([[1, 9, 2], [8, 3, 4]], np.float32))
    for out in (paddle.argmax(x), x.argmax()):
        assert out.shape == [1] and out.numpy().tolist() == [1]
    assert paddle.argmax(x, axis=0).numpy().tolist() == [1, 0, 1]
    assert x.argmax(axis=1, keepdim=True).shape == [2, 1]
    with pytest.raises(ValueError, match="argmax: axis 2"):
        paddle.argmax(x, axis=2)


def test_squeeze_without_axis_and_with_lists():
    x = paddle.reshape(arange(3, 4), [1, 3, 1, 4, 1])
    assert paddle.squeeze(x).shape == [3, 4]
    assert paddle.squeeze(x, axis=[0, 2]).shape == [3, 4, 1]
    assert x.squeeze(axis=1).shape == [1, 3, 1, 4, 1]  # extent 3: left as it is, as Paddle


def test_reshape_zero_copies_the_extent_and_flatten_takes_a_range():
    x = arange(2, 3, 4)
    assert paddle.reshape(x, [0, -1]).shape == [2, 12]
    assert x.reshape((0, 3, 2, 2)).shape == [2, 3, 2, 2]
    assert paddle.flatten(x, 1, 2).shape == [2, 12]
    assert paddle.flatten(x).shape == [24]
    assert x.flatten(start_axis=0, stop_axis=1).shape == [6, 4]
    with pytest.raises(ValueError, match="flatten: start_axis 2 is after stop_axis 1"):
        paddle.flatten(x, 2, 1)


def test_gradients_flow_through_the_wrappers():
    x = paddle.to_tensor(np.ones((1, 2, 3), np.float32), stop_gradient=False)
    y = paddle.flatten(paddle.squeeze(paddle.reshape(x, [0, 3, 2])), 0, 1)
    paddle.sum(y * 2.0).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 2, 3), 2.0, np.float32))


def test_scalars_integers_linear_and_clear_gradients():
    assert paddle.to_tensor(5.0).shape == [1]
    assert paddle.to_tensor(3).numpy().tolist() == [3]
    q = paddle.to_tensor(np.array([3, 4])) / 2
    assert q.dtype == paddle.float32 and q.numpy().tolist() == [1.5, 2.0]
    assert (paddle.to_tensor(np.array([1, 2])) / paddle.to_tensor(np.array([2, 4]))).numpy().tolist() == [0.5, 0.5]
    w = paddle.to_tensor(np.ones((4, 2), np.float32))
    np.testing.assert_array_equal(F.linear(arange(1, 4), w).numpy(), [[6.0, 6.0]])
    net = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    paddle.sum(net(paddle.to_tensor(np.ones((1, 2), np.float32)))).backward()
    opt.step()
    opt.clear_gradients()
    assert all(p.grad is None or not np.any(p.grad.numpy()) for p in net.parameters())
    assert paddle.max(arange(2, 3), axis=[0, 1]).numpy().item() == 5.0


def test_schedules_take_verbose_and_print_as_paddle(capsys):
    s = paddle.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5, verbose=True)
    net = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(learning_rate=s, parameters=net.parameters())
    s.step()
    assert opt.get_lr() == pytest.approx(0.05)
    assert capsys.readouterr().out.splitlines() == ["Epoch 0: StepDecay set learning rate to 0.1.",
                                                    "Epoch 1: StepDecay set learning rate to 0.05."]
    quiet = paddle.optimizer.lr.CosineAnnealingDecay(0.1, T_max=4)
    quiet.step()
    assert capsys.readouterr().out == "" and isinstance(quiet, paddle.optimizer.lr.LRScheduler)


def test_parameter_groups_scale_learning_rate_and_decay_per_group():
    paddle.seed(5)
    a, b = paddle.nn.Linear(2, 2), paddle.nn.Linear(2, 2)
    before_a, before_b = a.weight.numpy().copy(), b.weight.numpy().copy()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[
        {"params": a.parameters()},
        {"params": b.parameters(), "learning_rate": 0.5, "weight_decay": 0.01}])
    x = paddle.to_tensor(np.ones((1, 2), np.float32))
    paddle.sum(a(x) + b(x)).backward()
    ga, gb = a.weight.grad.numpy().copy(), b.weight.grad.numpy().copy()
    opt.step()
    np.testing.assert_allclose(a.weight.numpy(), before_a - 0.1 * ga, rtol=1e-6)
    np.testing.assert_allclose(b.weight.numpy(), before_b - 0.1 * 0.5 * (gb + 0.01 * before_b), rtol=1e-6)
    with pytest.raises(ValueError, match=r"parameter group 0 sets \['beta1'\]"):
        paddle.optimizer.Adam(parameters=[{"params": a.parameters(), "beta1": 0.5}])
