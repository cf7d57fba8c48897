"""Paddle 2.4's math beyond test_tensor_math.py (issue 30): values against NumPy and Paddle's
documented examples, gradients against central finite differences (float64)."""
import numpy as np
import pytest

import crew as paddle


def t(values, dtype="float64", stop_gradient=True):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=stop_gradient)


def finite_difference_check(fn, *arrays, eps=1e-6, tol=1e-5):
    """d sum(fn(*inputs) * w) / d input against central differences, w fixed random weights."""
    rng = np.random.default_rng(3)
    inputs = [t(a, stop_gradient=False) for a in arrays]
    out = fn(*inputs)
    w = rng.standard_normal(out.shape)
    (out * t(w)).sum().backward()
    for k, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            hi, lo = [x.copy() for x in arrays], [x.copy() for x in arrays]
            hi[k][i] += eps
            lo[k][i] -= eps
            f_hi = (fn(*[t(x) for x in hi]).numpy() * w).sum()
            f_lo = (fn(*[t(x) for x in lo]).numpy() * w).sum()
            numeric[i] = (f_hi - f_lo) / (2 * eps)
        np.testing.assert_allclose(inputs[k].grad.numpy(), numeric, rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (3, 4))
POS = RNG.uniform(0.5, 2.0, (3, 4))


@pytest.mark.parametrize("name,ref,data", [
    ("tan", np.tan, X), ("log2", np.log2, POS), ("log10", np.log10, POS), ("log1p", np.log1p, POS),
    ("ceil", np.ceil, X * 3), ("floor", np.floor, X * 3), ("trunc", np.trunc, X * 3),
    ("expm1", np.expm1, X), ("asin", np.arcsin, X * 0.9), ("acos", np.arccos, X * 0.9),
    ("atan", np.arctan, X * 3), ("sinh", np.sinh, X), ("cosh", np.cosh, X), ("asinh", np.arcsinh, X * 3),
    ("acosh", np.arccosh, POS + 1), ("atanh", np.arctanh, X * 0.9)])
def test_unary_math_against_numpy(name, ref, data):
    np.testing.assert_allclose(getattr(paddle, name)(t(data)).numpy(), ref(data), rtol=1e-12)
    np.testing.assert_allclose(getattr(t(data), name)().numpy(), ref(data), rtol=1e-12)


def test_round_is_half_away_from_zero_as_paddle():
    x = t([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2], "float32")
    np.testing.assert_array_equal(paddle.round(x).numpy(), [-3, -2, -1, 1, 2, 3, 1])
    np.testing.assert_array_equal(paddle.log1p(t([1e-12])).numpy(), np.log1p([1e-12]))


@pytest.mark.parametrize("name,data", [
    ("tan", X), ("log2", POS), ("log10", POS), ("log1p", POS), ("expm1", X), ("asin", X * 0.9),
    ("acos", X * 0.9), ("atan", X * 3), ("sinh", X), ("cosh", X), ("asinh", X * 3), ("acosh", POS + 1),
    ("atanh", X * 0.9)])
def test_unary_gradients(name, data):
    finite_difference_check(getattr(paddle, name), data)


def test_cumprod_values_and_gradient_with_zeros():
    x = np.array([[1., 2, 3], [4, 0, 6]])
    np.testing.assert_allclose(paddle.cumprod(t(x), dim=1).numpy(), np.cumprod(x, axis=1))
    np.testing.assert_allclose(paddle.cumprod(t(x), dim=0).numpy(), np.cumprod(x, axis=0))
    np.testing.assert_allclose(paddle.cumprod(t(x)).numpy(), np.cumprod(x))
    assert paddle.cumprod(t([1, 2, 3], "int64"), 0).numpy().tolist() == [1, 2, 6]
    finite_difference_check(lambda a: paddle.cumprod(a, dim=1), x)
    finite_difference_check(lambda a: paddle.cumprod(a, dim=0), X)


def test_maximum_minimum_broadcast_and_route_gradients_as_paddle():
    x, y = np.array([[1., 5], [3, 2]]), np.array([2., 2])
    np.testing.assert_array_equal(paddle.maximum(t(x), t(y)).numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(paddle.minimum(t(x), t(y)).numpy(), np.minimum(x, y))
    finite_difference_check(paddle.maximum, X, POS - 1.2)
    finite_difference_check(paddle.minimum, X, POS - 1.2)
    # Ties: Paddle gives the gradient to y.
    a, b = t([1.0], stop_gradient=False), t([1.0], stop_gradient=False)
    paddle.maximum(a, b).backward()
    assert a.grad.numpy().tolist() == [0.0] and b.grad.numpy().tolist() == [1.0]


def test_floor_divide_truncates_and_remainder_takes_the_divisors_sign():
    x, y = t([2, 3, 8, 7], "int64"), t([1, 5, 3, 3], "int64")  # Paddle's example
    assert paddle.floor_divide(x, y).numpy().tolist() == [2, 0, 2, 2]
    assert paddle.remainder(x, y).numpy().tolist() == [0, 3, 2, 1]
    a, b = np.array([7, -7, 8, -8]), np.array([3, 3, -3, -3])
    assert paddle.floor_divide(t(a, "int64"), t(b, "int64")).numpy().tolist() == [2, -2, -2, 2]  # trunc, 2.4
    assert paddle.mod(t(a, "int32"), t(b, "int32")).numpy().tolist() == np.mod(a, b).tolist()
    assert (t(a, "int64") % t(b, "int64")).numpy().tolist() == np.mod(a, b).tolist()
    assert (t(a, "int64") // 2).numpy().tolist() == [3, -3, 4, -4]
    f = np.array([5.5, -5.5, 1.0])
    np.testing.assert_allclose(paddle.remainder(t(f), t([2.0])).numpy(), np.mod(f, 2.0))
    with pytest.raises(ZeroDivisionError):
        paddle.floor_divide(x, t([0, 1, 1, 1], "int64"))
    with pytest.raises(TypeError, match="int32 or int64"):
        paddle.floor_divide(t([1.0]), t([2.0]))


def test_mm_bmm_dot_against_numpy():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    np.testing.assert_allclose(paddle.bmm(t(a), t(b)).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_allclose(paddle.mm(t(a[0]), t(b[0])).numpy(), a[0] @ b[0], rtol=1e-12)
    with pytest.raises(ValueError, match="bmm"):
        paddle.bmm(t(a), t(a))
    v = np.array([1., 2, 3])
    assert paddle.dot(t(v), t(v)).shape == [1] and paddle.dot(t(v), t(v)).item() == 14
    np.testing.assert_allclose(paddle.dot(t(a[0]), t(a[0])).numpy(), (a[0] * a[0]).sum(1, keepdims=True))
    finite_difference_check(paddle.dot, X, POS)
    finite_difference_check(paddle.bmm, a, b)


def test_argmin_median_numel_empty():
    x = np.array([[3., 1, 1], [0, 5, -2]])
    assert paddle.argmin(t(x)).numpy().tolist() == [5]
    assert paddle.argmin(t(x), axis=1).numpy().tolist() == [1, 2]
    assert paddle.argmin(t(x), axis=0, keepdim=True).shape == [1, 3]
    assert t(x).argmin(axis=1).numpy().tolist() == [1, 2]
    m = paddle.median(t(x))
    assert m.shape == [1] and m.item() == np.median(x)
    np.testing.assert_allclose(paddle.median(t(x), axis=1).numpy(), np.median(x, axis=1))
    np.testing.assert_allclose(paddle.median(t(x), axis=0, keepdim=True).numpy(), np.median(x, 0, keepdims=True))
    assert paddle.median(t(x), keepdim=True).shape == [1, 1]
    assert paddle.median(t([1, 2, 4, 3], "int64")).dtype == paddle.float32
    finite_difference_check(lambda a: paddle.median(a, axis=1), X)
    assert paddle.numel(t(x)).numpy().tolist() == [6] and paddle.numel(t(x)).dtype == paddle.int64
    assert paddle.empty([2, 3]).shape == [2, 3] and paddle.empty([2], dtype="int64").dtype == paddle.int64
    assert paddle.empty_like(t(x)).shape == [2, 3]


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ijk->kj", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ij,ij", [(2, 3), (2, 3)]), ("ba", [(2, 3)])])
def test_einsum_against_numpy_with_gradients(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    out = paddle.einsum(eq, *[t(a) for a in arrays]).numpy()
    ref = np.einsum(eq, *arrays)
    np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-10, atol=1e-12)
    finite_difference_check(lambda *xs: paddle.einsum(eq, *xs), *arrays)


def test_einsum_paddle_examples_and_errors():
    x, y = RNG.standard_normal(4), RNG.standard_normal(5)
    assert paddle.einsum("i->", t(x)).shape == [1]  # Paddle 2.4 has no 0-d tensors
    assert paddle.einsum("i,j->ij", t(x), t(y)).shape == [4, 5]
    with pytest.raises(ValueError, match="diagonals"):
        paddle.einsum("ii->i", t(np.eye(3)))
    with pytest.raises(ValueError, match="2 operands"):
        paddle.einsum("i,i", t(x))
    with pytest.raises(ValueError, match="extent"):
        paddle.einsum("i,i", t(x), t(y))


def test_tensor_methods_tolist_arithmetic_and_name():
    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and paddle.to_tensor([3], dtype="int64").tolist() == [3]
    y = paddle.to_tensor([2.0, 2.0])
    assert x.add(y).tolist() == [[3, 4], [5, 6]] and x.subtract(y).tolist() == [[-1, 0], [1, 2]]
    assert x.multiply(y).tolist() == [[2, 4], [6, 8]] and x.divide(y).tolist() == [[0.5, 1], [1.5, 2]]
    assert x.add(1.0).tolist() == [[2, 3], [4, 5]]
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    w.multiply(y).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]
    a, b = paddle.to_tensor([1.0]), paddle.to_tensor([1.0])
    assert a.name.startswith("generated_tensor_") and a.name == a.name and a.name != b.name
    a.name = "my_tensor"
    assert a.name == "my_tensor"
    assert x.maximum(y).tolist() == [[2, 2], [3, 4]] and x.median().tolist() == [2.5]


def test_register_hook_as_paddles_example():
    # Paddle 2.4's example: a hook doubling z's gradient doubles x's and y's.
    def double_hook(grad):
        return grad * 2

    x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0], stop_gradient=False)
    y = paddle.to_tensor([4.0, 5.0, 6.0, 7.0], stop_gradient=False)
    z = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
    w = x + y  # an op's output: the hook changes what flows on to x and y
    h = w.register_hook(double_hook)
    o = paddle.dot(w, z)
    o.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0, 8.0] and y.grad.tolist() == [2.0, 4.0, 6.0, 8.0]
    assert h.remove() and not h.remove()
    x.clear_grad()
    (x * 1.0 + y).sum().backward()
    assert x.grad.tolist() == [1.0] * 4
    seen = []
    leaf = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    leaf.register_hook(lambda g: seen.append(g.tolist()))  # None: the gradient is kept
    (leaf * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and leaf.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="stop_gradient"):
        paddle.to_tensor([1.0]).register_hook(double_hook)

    def broken(grad):
        raise KeyError("from the hook")

    bad = paddle.to_tensor([1.0], stop_gradient=False)
    bad.register_hook(broken)
    with pytest.raises(KeyError, match="from the hook"):
        (bad * 2).sum().backward()
