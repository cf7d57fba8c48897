"""crew.optimizer: LR schedules as learning_rate (Paddle's values) and gradient clipping."""
import math

import numpy as np
import pytest

import crew
from crew.optimizer import lr


def quadratic_param(value):
    p = crew.to_tensor(np.array(value, np.float32), stop_gradient=False)
    return p


def step_with_grad(opt, p, grad_scale=1.0):
    loss = crew.sum(p * p) * (0.5 * grad_scale)  # grad = p * grad_scale
    loss.backward()
    opt.step()
    opt.clear_grad()


def test_schedules_follow_paddles_formulas():
    s = lr.StepDecay(learning_rate=0.5, step_size=2, gamma=0.1)
    got = []
    for _ in range(5):
        got.append(s())
        s.step()
    np.testing.assert_allclose(got, [0.5, 0.5, 0.05, 0.05, 0.005])
    c = lr.CosineAnnealingDecay(learning_rate=1.0, T_max=4)
    vals = []
    for _ in range(5):
        vals.append(c.get_lr())
        c.step()
    np.testing.assert_allclose(vals, [0.5 * (1 + math.cos(math.pi * e / 4)) for e in range(5)], atol=1e-12)
    m = lr.MultiStepDecay(learning_rate=1.0, milestones=[1, 3], gamma=0.5)
    m.step(3)
    assert m.last_lr == 0.25 and m.last_epoch == 3
    p = lr.PiecewiseDecay(boundaries=[2], values=[1.0, 0.1])
    assert p() == 1.0
    p.step()
    p.step()
    assert p() == 0.1 and p.last_epoch == 2
    w = lr.LinearWarmup(learning_rate=lr.ExponentialDecay(1.0, gamma=0.5), warmup_steps=2, start_lr=0.0, end_lr=1.0)
    ws = []
    for _ in range(4):
        ws.append(w())
        w.step()
    np.testing.assert_allclose(ws, [0.0, 0.5, 1.0, 0.5])


def test_an_optimizer_reads_its_schedule_at_every_step():
    p = quadratic_param([1.0])
    sched = lr.StepDecay(learning_rate=0.5, step_size=1, gamma=0.5)
    opt = crew.optimizer.SGD(learning_rate=sched, parameters=[p])
    step_with_grad(opt, p)  # p -= 0.5 * 1
    assert opt.get_lr() == 0.5
    sched.step()
    step_with_grad(opt, p)  # p -= 0.25 * 0.5
    np.testing.assert_allclose(p.numpy(), [0.375])
    assert opt.get_lr() == 0.25
    restored = lr.StepDecay(learning_rate=0.5, step_size=1, gamma=0.5)
    restored.set_state_dict(sched.state_dict())
    assert restored() == sched() and restored.last_epoch == 1


def test_gradient_clipping_by_global_norm_inside_step():
    a, b = quadratic_param([3.0]), quadratic_param([4.0])  # grads 3, 4: global norm 5
    opt = crew.optimizer.SGD(learning_rate=1.0, parameters=[a, b], grad_clip=crew.nn.ClipGradByGlobalNorm(1.0))
    loss = crew.sum(a * a) * 0.5 + crew.sum(b * b) * 0.5
    loss.backward()
    opt.step()
    np.testing.assert_allclose([a.item(), b.item()], [3.0 - 0.6, 4.0 - 0.8], rtol=1e-6)


def test_clip_by_value_and_by_norm_called_directly():
    p = quadratic_param([2.0, -3.0, 0.5])
    crew.sum(p * p).backward()  # grad 2p = [4, -6, 1]
    crew.nn.ClipGradByValue(max=2.0)([p])
    np.testing.assert_allclose(p.grad.numpy(), [2.0, -2.0, 1.0])
    crew.nn.ClipGradByNorm(clip_norm=1.0)([p])
    np.testing.assert_allclose(np.linalg.norm(p.grad.numpy()), 1.0, rtol=1e-6)
    with pytest.raises(TypeError, match="grad_clip"):
        crew.optimizer.Adam(parameters=[p], grad_clip="clip")
