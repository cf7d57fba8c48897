"""crew.Tensor autograd from Python: operators, functions, backward, no_grad, errors."""
import numpy as np
import pytest

import crew


def param(a):
    return crew.to_tensor(np.asarray(a, dtype=np.float32), stop_gradient=False)


def test_backward_of_a_small_graph_matches_the_analytic_gradient():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((3, 4)).astype(np.float32)
    w_np = rng.standard_normal((4, 2)).astype(np.float32)
    x, w = crew.to_tensor(x_np), param(w_np)
    loss = crew.mean(crew.exp(crew.matmul(x, w) * 0.5) - 1.0)
    loss.backward()
    e = np.exp(x_np @ w_np * 0.5)
    assert loss.item() == pytest.approx(float(np.mean(e - 1.0)), rel=1e-5)
    expected = x_np.T @ (e * 0.5 / e.size)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert x.grad is None and x.stop_gradient and not w.stop_gradient


def test_scalar_operators_on_both_sides():
    a = param([1.0, 2.0, 4.0])
    out = (2.0 - a) + (8.0 / a) * 3 - a / 2 + a ** 2 + 1 * -a
    expected = (2 - a.numpy()) + (8 / a.numpy()) * 3 - a.numpy() / 2 + a.numpy() ** 2 - a.numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    crew.sum(out).backward()
    an = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(a.grad.numpy(), -1 - 24 / an ** 2 - 0.5 + 2 * an - 1, rtol=1e-5)


def test_no_grad_records_nothing_and_restores_the_mode():
    a = param([1.0, 2.0])
    with crew.no_grad():
        b = a * 3.0
        assert not crew.is_grad_enabled()
    assert crew.is_grad_enabled()
    assert b.stop_gradient

    @crew.no_grad()
    def f(t):
        return t + 1.0
    assert f(a).stop_gradient


def test_gradients_accumulate_until_cleared():
    a = param([1.0, 2.0])
    crew.sum(a * 2.0).backward()
    crew.sum(a * 2.0).backward()
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 4.0])
    a.clear_grad()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 0.0])


def test_shape_functions():
    x = crew.to_tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert crew.flatten(x, 1).shape == [2, 12]
    assert crew.flatten(x).shape == [24]
    assert crew.reshape(x, [4, -1]).shape == [4, 6]
    assert crew.unsqueeze(x, -1).shape == [2, 3, 4, 1]
    assert crew.squeeze(crew.unsqueeze(x, 0), 0).shape == [2, 3, 4]
    assert crew.concat([x, x], axis=-1).shape == [2, 3, 8]
    assert crew.stack([x, x], axis=1).shape == [2, 2, 3, 4]
    assert x.sum(axis=2, keepdim=True).shape == [2, 3, 1]
    np.testing.assert_array_equal(crew.argmax(x, axis=1).numpy(), np.full((2, 4), 2))
    m = crew.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(m.T.numpy(), m.numpy().T)
    assert crew.max(m).item() == 5.0 and m.min(axis=0).shape == [3]


def test_comparisons_and_indexing():
    x = crew.to_tensor(np.array([[1, 5], [3, 2]], dtype=np.float32))
    np.testing.assert_array_equal((x > 2).numpy(), [[0, 1], [1, 0]])
    np.testing.assert_array_equal((x == x).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(x[1].numpy(), [3, 2])
    np.testing.assert_array_equal(x[-1:].numpy(), [[3, 2]])
    with pytest.raises(IndexError, match="out of range for axis 0 of size 2"):
        x[2]
    np.testing.assert_array_equal(x[:, 1].numpy(), [5, 2])
    np.testing.assert_array_equal(x[0:1, -1:].numpy(), [[5]])
    np.testing.assert_array_equal(x[::-2].numpy(), [[3, 2]])  # steps (issue 30)


def test_indexing_a_parameter_is_differentiable():
    w = param(np.arange(6.0).reshape(2, 3))
    (w[1].sum() * 2.0 + w[:, 0:2].sum() * 3.0).backward()
    np.testing.assert_allclose(w.grad.numpy(), [[3, 3, 0], [5, 5, 2]])


def test_transpose_split_slice():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = param(a)
    y = crew.transpose(x, [2, 0, 1])
    np.testing.assert_array_equal(y.numpy(), a.transpose(2, 0, 1))
    parts = crew.split(x, 3, axis=1)
    assert [p.shape for p in parts] == [[2, 1, 4]] * 3
    first, rest = crew.split(x, [1, -1], axis=-1)
    np.testing.assert_array_equal(rest.numpy(), a[:, :, 1:])
    np.testing.assert_array_equal(crew.slice(x, [1, 2], [1, 0], [3, 2]).numpy(), a[:, 1:3, 0:2])
    (y.sum() + first.sum() * 2.0).backward()
    expected = np.ones_like(a)
    expected[:, :, 0] += 2
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    with pytest.raises(ValueError, match="split"):
        crew.split(x, [1, 1], axis=1)
    with pytest.raises(ValueError, match="split"):
        crew.split(x, 5, axis=1)


def test_bad_shapes_raise_value_error_naming_both():
    a = crew.to_tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[2, 3\] and \[4\]"):
        a + crew.to_tensor(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"\[2, 3\] x \[2, 3\]"):
        crew.matmul(a, a)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        crew.sum(a, axis=3)
    with pytest.raises(ValueError, match="permute"):
        crew.transpose(crew.unsqueeze(a, 0), [2, 1, 1])


def test_writing_into_a_tensor_saved_for_backward_is_refused():
    # Issue 29: writing through x.numpy() into a tensor mul saved gave a stale gradient
    # ([20, 20] instead of [2, 4]). NumPy now gets a read-only view of saved data...
    x = param([1.0, 2.0])
    y = (x * x).sum()
    with pytest.raises(ValueError, match="read-only"):
        x.numpy()[:] = 10
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    # ... and writable again once backward released the graph.
    x.numpy()[:] = 10
    np.testing.assert_allclose(x.numpy(), [10.0, 10.0])


def test_an_optimizer_step_between_two_backwards_is_detected():
    w = param([1.0, 2.0])
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    opt = crew.optimizer.SGD(learning_rate=0.1, parameters=[w])
    opt.step()
    with pytest.raises(RuntimeError, match="backward of 'mul'.*modified by an inplace operation"):
        loss.backward()


def test_backward_retain_graph_without_a_gradient_allows_a_second_pass():
    a = param([1.0, 2.0])
    loss = crew.sum(crew.exp(a))
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-5)
    with pytest.raises(Exception):
        loss.backward()  # the graph was released by the second pass
