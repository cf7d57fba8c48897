"""crew.optimizer.lr: PolynomialDecay, NoamDecay, LambdaDecay, NaturalExpDecay,
InverseTimeDecay, OneCycleLR, CyclicLR and ReduceOnPlateau against Paddle 2.4's documented
formulas (written out here in plain Python), their verbose lines and state_dict."""
import math

import numpy as np
import pytest

import crew as paddle
from crew.optimizer import lr


def rates(sched, n):
    out = []
    for _ in range(n):
        out.append(sched())
        sched.step()
    return out


def test_polynomial_decay():
    def ref(t, base=0.5, steps=5, end=0.01, power=1.5, cycle=False):
        if cycle:
            steps = steps * (1 if t == 0 else math.ceil(t / steps))
        else:
            t = min(t, steps)
        return (base - end) * (1 - t / steps) ** power + end
    np.testing.assert_allclose(rates(lr.PolynomialDecay(0.5, 5, 0.01, 1.5), 8), [ref(t) for t in range(8)],
                               rtol=1e-12)
    np.testing.assert_allclose(rates(lr.PolynomialDecay(0.5, 5, 0.01, 1.5, cycle=True), 12),
                               [ref(t, cycle=True) for t in range(12)], rtol=1e-12)


def test_noam_natural_exp_inverse_time_and_lambda():
    def noam(t, d_model=512, warmup=4, base=1.0):
        a = 1 if t == 0 else t ** -0.5
        return base * d_model ** -0.5 * min(a, warmup ** -1.5 * t)
    np.testing.assert_allclose(rates(lr.NoamDecay(d_model=512, warmup_steps=4), 10), [noam(t) for t in range(10)],
                               rtol=1e-12)
    np.testing.assert_allclose(rates(lr.NaturalExpDecay(learning_rate=0.5, gamma=0.1), 5),
                               [0.5 * math.exp(-0.1 * t) for t in range(5)], rtol=1e-12)
    np.testing.assert_allclose(rates(lr.InverseTimeDecay(learning_rate=0.5, gamma=0.1), 5),
                               [0.5 / (1 + 0.1 * t) for t in range(5)], rtol=1e-12)
    np.testing.assert_allclose(rates(lr.LambdaDecay(learning_rate=0.5, lr_lambda=lambda x: 0.95 ** x), 5),
                               [0.5 * 0.95 ** t for t in range(5)], rtol=1e-12)
    with pytest.raises(TypeError, match="lr_lambda"):
        lr.LambdaDecay(0.5, lr_lambda=3)
    np.testing.assert_allclose(rates(lr.MultiplicativeDecay(learning_rate=0.5, lr_lambda=lambda x: 0.95), 4),
                               [0.5 * 0.95 ** t for t in range(4)], rtol=1e-12)


def one_cycle_ref(total, max_lr, divide=25.0, end=1e-4, pct=0.3, strategy="cos", three=False):
    """Paddle 2.4's OneCycleLR.get_lr, transcribed."""
    init = max_lr / divide
    if three:
        starts = [0, pct * total - 1, 2 * pct * total - 2, total - 1]
        sizes = [starts[1] - starts[0], starts[2] - starts[1], starts[3] - starts[2], starts[3] - starts[2]]
        conf = [init, max_lr, init, end]
    else:
        starts = [0, pct * total - 1, total - 1]
        sizes = [starts[1] - starts[0], starts[2] - starts[1], starts[2] - starts[1]]
        conf = [init, max_lr, end]

    def anneal(a, b, p):
        return (b + (a - b) / 2.0 * (math.cos(math.pi * p) + 1)) if strategy == "cos" else (b - a) * p + a

    out = []
    for t in range(total + 1):
        for i, (end_step, size) in enumerate(zip(starts[1:], sizes)):
            if t <= end_step or i == len(conf) - 2:
                out.append(anneal(conf[i], conf[i + 1], (t - starts[i]) / size))
                break
    return out


def test_one_cycle_lr():
    s = lr.OneCycleLR(max_learning_rate=1.0, total_steps=20)
    np.testing.assert_allclose(rates(s, 20) + [s()], one_cycle_ref(20, 1.0), rtol=1e-12)
    s = lr.OneCycleLR(0.1, 30, divide_factor=10, end_learning_rate=0.0, phase_pct=0.2, anneal_strategy="linear",
                      three_phase=True)
    np.testing.assert_allclose(rates(s, 30) + [s()], one_cycle_ref(30, 0.1, 10, 0.0, 0.2, "linear", True),
                               rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="total steps"):
        s.step()
    with pytest.raises(ValueError, match="anneal_strategy"):
        lr.OneCycleLR(0.1, 10, anneal_strategy="cosine")


def cyclic_ref(t, base, top, up, down, scale_fn, mode):
    size = up + down
    cycle = 1 + t // size
    pct = 1.0 + t / size - cycle
    factor = pct / (up / size) if pct <= up / size else (1 - pct) / (1 - up / size)
    return base + (top - base) * factor * scale_fn(cycle if mode == "cycle" else t)


def test_cyclic_lr_modes():
    got = rates(lr.CyclicLR(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=3), 13)
    np.testing.assert_allclose(got, [cyclic_ref(t, 0.1, 1.0, 3, 3, lambda x: 1.0, "cycle") for t in range(13)])
    got = rates(lr.CyclicLR(0.1, 1.0, 2, step_size_down=4, mode="triangular2"), 13)
    np.testing.assert_allclose(got, [cyclic_ref(t, 0.1, 1.0, 2, 4, lambda x: 1 / 2 ** (x - 1), "cycle")
                                     for t in range(13)])
    got = rates(lr.CyclicLR(0.1, 1.0, 2, mode="exp_range", exp_gamma=0.9), 9)
    np.testing.assert_allclose(got, [cyclic_ref(t, 0.1, 1.0, 2, 2, lambda x: 0.9 ** x, "iterations")
                                     for t in range(9)])
    got = rates(lr.CyclicLR(0.1, 1.0, 2, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"), 6)
    np.testing.assert_allclose(got, [cyclic_ref(t, 0.1, 1.0, 2, 2, lambda x: 1 / (1 + x), "iterations")
                                     for t in range(6)])
    with pytest.raises(ValueError, match="mode"):
        lr.CyclicLR(0.1, 1.0, 2, mode="square")


def test_reduce_on_plateau_as_paddle_documents():
    # Paddle's rule: after more than `patience` steps without improving by threshold (rel),
    # lr = max(lr * factor, min_lr); then `cooldown` steps are not counted.
    s = lr.ReduceOnPlateau(learning_rate=1.0, factor=0.5, patience=2, cooldown=1, verbose=True)
    assert s.last_epoch == 0 and s() == 1.0
    seen = []
    for loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5]:
        s.step(loss)
        seen.append(s())
    assert seen == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
    # Tensors and arrays of one element are metrics too, as in Paddle.
    s.step(paddle.to_tensor([0.4]))
    s.step(np.array([0.3], np.float32))
    assert s.best == pytest.approx(0.3)
    with pytest.raises(TypeError, match="metrics"):
        s.step("low")
    with pytest.raises(ValueError, match="shape"):
        s.step(np.ones([2]))
    with pytest.raises(ValueError, match="factor"):
        lr.ReduceOnPlateau(1.0, factor=1.0)


def test_reduce_on_plateau_prints_only_when_it_lowers(capsys):
    s = lr.ReduceOnPlateau(learning_rate=1.0, patience=0, verbose=True)
    s.step(1.0)
    assert capsys.readouterr().out == ""
    s.step(2.0)
    assert capsys.readouterr().out == "Epoch 2: ReduceOnPlateau set learning rate to 0.1.\n"


def test_verbose_schedules_print_each_step(capsys):
    s = lr.NaturalExpDecay(learning_rate=0.5, gamma=0.0, verbose=True)
    s.step()
    assert capsys.readouterr().out == ("Epoch 0: NaturalExpDecay set learning rate to 0.5.\n"
                                       "Epoch 1: NaturalExpDecay set learning rate to 0.5.\n")


def test_state_dict_round_trip():
    a = lr.CyclicLR(0.1, 1.0, 3)
    for _ in range(4):
        a.step()
    b = lr.CyclicLR(0.1, 1.0, 3)
    b.set_state_dict(a.state_dict())
    assert b.last_epoch == 4 and b() == a()
    b.step()
    a.step()
    assert b() == a()
    p = lr.ReduceOnPlateau(1.0, patience=1, cooldown=2)
    for m in [1.0, 2.0, 2.0]:
        p.step(m)
    sd = p.state_dict()
    assert set(sd) == {"last_epoch", "last_lr", "best", "num_bad_epochs", "cooldown_counter"}
    q = lr.ReduceOnPlateau(1.0, patience=1, cooldown=2)
    q.set_state_dict(sd)
    assert (q.last_epoch, q(), q.best, q.cooldown_counter) == (3, 0.1, 1.0, 2)


def test_a_schedule_drives_an_optimizer():
    linear = paddle.nn.Linear(2, 1)
    sched = lr.NoamDecay(d_model=16, warmup_steps=2, learning_rate=1.0)
    opt = paddle.optimizer.RMSProp(learning_rate=sched, parameters=linear.parameters())
    for _ in range(3):
        sched.step()
        assert opt.get_lr() == sched()
