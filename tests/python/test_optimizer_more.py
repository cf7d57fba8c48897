"""crew.optimizer: RMSProp, Adagrad, Adadelta, Adamax and Lamb, a few steps each against a
NumPy reference of Paddle 2.4's formulas; parameter groups, L1Decay/L2Decay as weight_decay,
state_dict round trips and Paddle's documentation examples."""
import numpy as np
import pytest

import crew as paddle
from crew.regularizer import L1Decay, L2Decay

START = np.array([[0.5, -1.5, 2.0], [0.0, -0.25, 1.0]], np.float64)


def grad_at(step):
    return np.sin(np.arange(6, dtype=np.float64).reshape(2, 3) * 1.3 + 0.9 * step) + 0.1


def run(make, reference, steps=4, rtol=1e-5):
    """Steps the optimizer `make(params)` on START with grad_at(s) and the NumPy `reference(w, g,
    s)` alongside; they must agree after every step."""
    p = paddle.to_tensor(START.astype(np.float32), stop_gradient=False)
    opt = make([p])
    w = START.copy()
    for s in range(steps):
        g = grad_at(s)
        (p * paddle.to_tensor(g.astype(np.float32))).sum().backward()
        opt.step()
        opt.clear_grad()
        reference(w, g, s)
        np.testing.assert_allclose(p.numpy(), w, rtol=rtol, atol=1e-6, err_msg=f"step {s}")
    return opt, p


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(centered):
    lr, rho, eps, mu, l2 = 0.01, 0.9, 1e-6, 0.5, 0.01
    st = {"ms": np.zeros_like(START), "mg": np.zeros_like(START), "mom": np.zeros_like(START)}

    def ref(w, g, s):
        g = g + l2 * w
        st["ms"] = rho * st["ms"] + (1 - rho) * g * g
        st["mg"] = rho * st["mg"] + (1 - rho) * g
        d = st["ms"] - st["mg"] ** 2 + eps if centered else st["ms"] + eps
        st["mom"] = mu * st["mom"] + lr * g / np.sqrt(d)
        w -= st["mom"]
    run(lambda ps: paddle.optimizer.RMSProp(lr, rho, eps, mu, centered, parameters=ps, weight_decay=l2), ref)


def test_adagrad_with_initial_accumulator():
    lr, eps = 0.1, 1e-6
    st = {"m": np.full_like(START, 0.1)}

    def ref(w, g, s):
        st["m"] += g * g
        w -= lr * g / (np.sqrt(st["m"]) + eps)
    run(lambda ps: paddle.optimizer.Adagrad(lr, parameters=ps, initial_accumulator_value=0.1), ref)


def test_adadelta_as_paddle_24():
    eps, rho = 1e-6, 0.95
    st = {"g": np.zeros_like(START), "u": np.zeros_like(START)}

    def ref(w, g, s):
        st["g"] = rho * st["g"] + (1 - rho) * g * g
        u = -np.sqrt((st["u"] + eps) / (st["g"] + eps)) * g
        st["u"] = rho * st["u"] + (1 - rho) * u * u
        w += u
    run(lambda ps: paddle.optimizer.Adadelta(learning_rate=0.001, epsilon=eps, rho=rho, parameters=ps), ref)


def test_adamax():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    st = {"m": np.zeros_like(START), "u": np.zeros_like(START)}

    def ref(w, g, s):
        st["m"] = b1 * st["m"] + (1 - b1) * g
        st["u"] = np.maximum(b2 * st["u"] + eps, np.abs(g))
        w -= lr / (1 - b1 ** (s + 1)) * st["m"] / st["u"]
    run(lambda ps: paddle.optimizer.Adamax(learning_rate=lr, parameters=ps), ref)


def lamb_ref(wd, lr=0.01, b1=0.9, b2=0.999, eps=1e-6):
    st = {"m": np.zeros_like(START), "v": np.zeros_like(START)}

    def ref(w, g, s):
        st["m"] = b1 * st["m"] + (1 - b1) * g
        st["v"] = b2 * st["v"] + (1 - b2) * g * g
        r = (st["m"] / (1 - b1 ** (s + 1))) / (np.sqrt(st["v"] / (1 - b2 ** (s + 1))) + eps) + wd * w
        pn, rn = np.linalg.norm(w), np.linalg.norm(r)
        w -= lr * (pn / rn if pn > 0 and rn > 0 else 1.0) * r
    return ref


def test_lamb_and_its_exclude_fn():
    run(lambda ps: paddle.optimizer.Lamb(learning_rate=0.01, lamb_weight_decay=0.1, parameters=ps), lamb_ref(0.1))
    run(lambda ps: paddle.optimizer.Lamb(learning_rate=0.01, lamb_weight_decay=0.1, parameters=ps,
                                         exclude_from_weight_decay_fn=lambda p: True), lamb_ref(0.0))
    linear = paddle.nn.Linear(3, 2, weight_attr=paddle.ParamAttr(name="fc.w_0"),
                              bias_attr=paddle.ParamAttr(name="fc.b_0"))
    asked = []
    paddle.optimizer.Lamb(parameters=linear.parameters(),
                          exclude_from_weight_decay_fn=lambda p: asked.append(p.name) or p.name.endswith(".b_0"))
    assert asked == ["fc.w_0", "fc.b_0"]
    with pytest.raises(TypeError, match="exclude_from_weight_decay_fn"):
        paddle.optimizer.Lamb(parameters=linear.parameters(), exclude_from_weight_decay_fn=3)


def test_l1_and_l2_decay_as_weight_decay():
    lr, eps = 0.1, 1e-6
    for reg, term in [(L2Decay(0.05), lambda w: 0.05 * w), (L1Decay(0.05), lambda w: 0.05 * np.sign(w))]:
        st = {"m": np.zeros_like(START)}

        def ref(w, g, s):
            g = g + term(w)
            st["m"] += g * g
            w -= lr * g / (np.sqrt(st["m"]) + eps)
        run(lambda ps: paddle.optimizer.Adagrad(lr, parameters=ps, weight_decay=reg), ref)


def test_parameter_groups_scale_the_rate_exactly_with_momentum():
    lr, rho, eps, mu = 0.01, 0.9, 1e-6, 0.5
    a = paddle.to_tensor(START.astype(np.float32), stop_gradient=False)
    b = paddle.to_tensor(START.astype(np.float32), stop_gradient=False)
    opt = paddle.optimizer.RMSProp(lr, rho, eps, mu, parameters=[{"params": [a]},
                                                              {"params": [b], "learning_rate": 0.1}])
    refs = []
    for mult in (1.0, 0.1):
        st = {"ms": np.zeros_like(START), "mom": np.zeros_like(START), "w": START.copy()}
        refs.append((mult, st))
    for s in range(4):
        g = grad_at(s)
        ((a + b) * paddle.to_tensor(g.astype(np.float32))).sum().backward()
        opt.step()
        opt.clear_grad()
        for mult, st in refs:  # Paddle: the group's rate is lr * mult inside the momentum
            st["ms"] = rho * st["ms"] + (1 - rho) * g * g
            st["mom"] = mu * st["mom"] + lr * mult * g / np.sqrt(st["ms"] + eps)
            st["w"] -= st["mom"]
    np.testing.assert_allclose(a.numpy(), refs[0][1]["w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), refs[1][1]["w"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda ps: paddle.optimizer.RMSProp(0.01, momentum=0.9, centered=True, parameters=ps),
    lambda ps: paddle.optimizer.Adagrad(0.1, parameters=ps),
    lambda ps: paddle.optimizer.Adadelta(parameters=ps),
    lambda ps: paddle.optimizer.Adamax(parameters=ps),
    lambda ps: paddle.optimizer.Lamb(parameters=ps),
])
def test_state_dict_round_trip_resumes_exactly(make, tmp_path):
    p = paddle.to_tensor(START.astype(np.float32), stop_gradient=False)
    opt = make([p])
    for s in range(3):
        (p * paddle.to_tensor(grad_at(s).astype(np.float32))).sum().backward()
        opt.step()
        opt.clear_grad()
    paddle.save(opt.state_dict(), str(tmp_path / "opt.pdopt"))
    q = paddle.to_tensor(p.numpy(), stop_gradient=False)
    resumed = make([q])
    resumed.set_state_dict(paddle.load(str(tmp_path / "opt.pdopt")))
    for s in range(3, 6):
        for t, o in ((p, opt), (q, resumed)):
            (t * paddle.to_tensor(grad_at(s).astype(np.float32))).sum().backward()
            o.step()
            o.clear_grad()
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_paddle_documentation_examples_run():
    # The examples of Paddle 2.4's docs for each optimizer, as written there.
    inp = paddle.to_tensor(np.random.rand(10, 10).astype("float32"))  # paddle.rand([10, 10]) in the docs
    linear = paddle.nn.Linear(10, 10)
    for make in [
        lambda: paddle.optimizer.RMSProp(learning_rate=0.1, parameters=linear.parameters(), weight_decay=0.01),
        lambda: paddle.optimizer.Adagrad(learning_rate=0.1, parameters=linear.parameters()),
        lambda: paddle.optimizer.Adadelta(learning_rate=0.1, parameters=linear.parameters(), weight_decay=0.01),
        lambda: paddle.optimizer.Adamax(learning_rate=0.1, parameters=linear.parameters(), beta1=0.9,
                                        beta2=0.99),
        lambda: paddle.optimizer.Lamb(learning_rate=0.002, parameters=linear.parameters(), lamb_weight_decay=0.01),
    ]:
        opt = make()
        before = linear.weight.numpy().copy()
        out = linear(inp)
        loss = paddle.mean(out)
        loss.backward()
        opt.step()
        opt.clear_grad()
        assert not np.array_equal(before, linear.weight.numpy())


def test_required_learning_rate_and_bad_options():
    linear = paddle.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="learning_rate"):
        paddle.optimizer.RMSProp(parameters=linear.parameters())
    with pytest.raises(TypeError, match="learning_rate"):
        paddle.optimizer.Adagrad(parameters=linear.parameters())
    with pytest.raises(ValueError, match="rho"):
        paddle.optimizer.RMSProp(0.1, rho=1.5, parameters=linear.parameters())
    with pytest.raises(ValueError, match="beta1"):
        paddle.optimizer.Adamax(beta1=1.0, parameters=linear.parameters())
