"""paddle.grad (crew/autograd_grad.py, engine partial_grad): the gradients of outputs with
respect to leaves and intermediate tensors, against NumPy; leaves' .grad stays untouched."""
import numpy as np
import pytest

import crew as paddle


def leaf(values):
    return paddle.to_tensor(np.asarray(values, dtype=np.float64), stop_gradient=False)


def test_grad_as_paddle_documents():
    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    y = x * x
    dx = paddle.grad(outputs=[y], inputs=[x], grad_outputs=[paddle.full([2, 2], 2.0)])[0]
    np.testing.assert_allclose(dx.numpy(), 4 * x.numpy())
    assert dx.stop_gradient and x.grad is None


def test_grad_of_intermediate_and_several_inputs_leaves_grad_untouched():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, w = leaf(a), leaf(b)
    (paddle.matmul(x, w).sum()).backward()  # an earlier backward's .grad must survive
    before = w.grad.numpy().copy()
    h = paddle.matmul(x, w)
    loss = (paddle.tanh(h) * h).sum()
    gx, gw, gh = paddle.grad(loss, [x, w, h])
    t = np.tanh(a @ b)
    dh = t + (1 - t ** 2) * (a @ b)
    np.testing.assert_allclose(gh.numpy(), dh, rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), dh @ b.T, rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), a.T @ dh, rtol=1e-12)
    np.testing.assert_array_equal(w.grad.numpy(), before)


def test_grad_sums_over_outputs_and_retains_graph_when_asked():
    x = leaf([1.0, 2.0, 3.0])
    y, z = x * x, x * 3.0
    g = paddle.grad([y, z], x, grad_outputs=[None, paddle.to_tensor(np.full(3, 2.0))], retain_graph=True)[0]
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() + 6)
    again = paddle.grad(y.sum(), x)[0]  # y's graph was kept
    np.testing.assert_allclose(again.numpy(), 2 * x.numpy())
    with pytest.raises(RuntimeError, match="freed"):
        paddle.grad(y.sum(), x)


def test_unused_inputs_and_no_grad_vars():
    x, w = leaf([1.0, 2.0]), leaf([5.0])
    y = x * 2.0
    with pytest.raises(ValueError, match="allow_unused"):
        paddle.grad(y.sum(), [x, w], retain_graph=True)
    gx, gw = paddle.grad(y.sum(), [x, w], allow_unused=True, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0])
    assert gw is None
    h = x * x
    out = (h + x).sum()
    g = paddle.grad(out, x, no_grad_vars=[h])[0]  # only the direct path counts
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])


def test_unsupported_arguments_say_so():
    x = leaf([1.0])
    with pytest.raises(NotImplementedError, match="create_graph"):
        paddle.grad((x * x).sum(), x, create_graph=True)
    with pytest.raises(TypeError, match="inputs"):
        paddle.grad((x * x).sum(), [np.ones(1)])
