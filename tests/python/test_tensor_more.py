"""Paddle 2.4's t, neg, reciprocal, clone, assign, logsumexp, tril, triu, diag, trace, outer,
kron, meshgrid, diff, cross, dist, strided_slice, repeat_interleave, unique, nonzero, shape,
increment (crew/tensor_more.py): values against NumPy and Paddle's documented examples,
gradients against central finite differences (float64)."""
import numpy as np
import pytest

import crew as paddle
from test_tensor_math_more import finite_difference_check, t

RNG = np.random.default_rng(1)
M = RNG.uniform(-1, 1, (3, 4))
V = RNG.uniform(-1, 1, (3,))


def test_t_neg_reciprocal_clone():
    np.testing.assert_array_equal(paddle.t(t(M)).numpy(), M.T)
    np.testing.assert_array_equal(t(M).t().numpy(), M.T)
    np.testing.assert_array_equal(paddle.t(t(V)).numpy(), V)
    with pytest.raises(ValueError, match="at most 2-d"):
        paddle.t(t(np.zeros((2, 2, 2))))
    np.testing.assert_array_equal(paddle.neg(t(M)).numpy(), -M)
    np.testing.assert_allclose(paddle.reciprocal(t(M)).numpy(), 1 / M)
    finite_difference_check(paddle.reciprocal, M + 2)
    finite_difference_check(lambda x: paddle.neg(paddle.clone(x)) * x, M)
    finite_difference_check(lambda x: x.clone() * x, M)  # the method too, as Paddle's


def test_tensor_clone_method_keeps_the_graph_and_copies():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x.clone()
    assert not y.stop_gradient
    (y * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    c = paddle.to_tensor([1.0, 2.0])
    d = c.clone()
    d[0] = 5.0  # a copy: the original is untouched
    assert c.numpy().tolist() == [1.0, 2.0] and d.stop_gradient


def test_assign_copies_and_writes_into_output():
    out = paddle.assign(np.array([[2.5, -3.0]], dtype=np.float32))
    assert out.shape == [1, 2] and out.dtype == paddle.float32
    assert paddle.assign(3.0).shape == [1]
    target = paddle.zeros([2], "float64")
    assert paddle.assign(t([1.0, 2.0]), target) is target
    np.testing.assert_array_equal(target.numpy(), [1.0, 2.0])
    finite_difference_check(lambda x: paddle.assign(x) * x, M)


@pytest.mark.parametrize("axis,keepdim", [(None, False), (1, False), (0, True), ([0, 1], False)])
def test_logsumexp_values_and_gradient(axis, keepdim):
    ref = np.log(np.exp(M).sum(axis=None if axis is None else tuple(np.atleast_1d(axis)), keepdims=keepdim))
    out = paddle.logsumexp(t(M), axis=axis, keepdim=keepdim).numpy()
    np.testing.assert_allclose(out, np.atleast_1d(ref), rtol=1e-12)
    finite_difference_check(lambda x: paddle.logsumexp(x, axis=axis, keepdim=keepdim), M)


def test_logsumexp_is_stable_for_large_values():
    np.testing.assert_allclose(paddle.logsumexp(t([1000.0, 1000.0])).numpy(), [1000 + np.log(2)])


@pytest.mark.parametrize("diagonal", [-1, 0, 2])
def test_tril_triu_against_numpy(diagonal):
    x = RNG.uniform(-1, 1, (2, 3, 4))
    np.testing.assert_array_equal(paddle.tril(t(x), diagonal).numpy(), np.tril(x, diagonal))
    np.testing.assert_array_equal(paddle.triu(t(x), diagonal).numpy(), np.triu(x, diagonal))
    finite_difference_check(lambda v: paddle.tril(v, diagonal), M)
    finite_difference_check(lambda v: v.triu(diagonal), M)


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3])
def test_diag_both_ways_against_numpy(offset):
    np.testing.assert_array_equal(paddle.diag(t(V), offset).numpy(), np.diag(V, offset))
    np.testing.assert_array_equal(paddle.diag(t(M), offset).numpy(), np.diag(M, offset))
    finite_difference_check(lambda v: paddle.diag(v, offset), V)
    finite_difference_check(lambda v: paddle.diag(v, offset), M)


def test_diag_padding_value_as_paddle_documents():
    out = paddle.diag(paddle.to_tensor([1, 2, 3]), padding_value=6)
    np.testing.assert_array_equal(out.numpy(), [[1, 6, 6], [6, 2, 6], [6, 6, 3]])


@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (1, 0, 1), (-1, 1, 2), (0, -1, 0)])
def test_trace_against_numpy(offset, axis1, axis2):
    x = RNG.uniform(-1, 1, (3, 4, 5))
    np.testing.assert_allclose(paddle.trace(t(x), offset, axis1, axis2).numpy(),
                               np.trace(x, offset, axis1, axis2), rtol=1e-12)
    finite_difference_check(lambda v: paddle.trace(v, offset, axis1, axis2), x)
    assert paddle.trace(t(M)).shape == [1]


def test_outer_kron_against_numpy():
    np.testing.assert_allclose(paddle.outer(t(V), t(M)).numpy(), np.outer(V, M))
    y = RNG.uniform(-1, 1, (2, 2))
    np.testing.assert_allclose(paddle.kron(t(M), t(y)).numpy(), np.kron(M, y))
    np.testing.assert_allclose(paddle.kron(t(V), t(y)).numpy(), np.kron(V, y))
    finite_difference_check(paddle.outer, V, M)
    finite_difference_check(paddle.kron, M, y)


def test_meshgrid_ij_and_gradient():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0])
    for grid in (paddle.meshgrid(t(a), t(b)), paddle.meshgrid([t(a), t(b)])):
        for mine, ref in zip(grid, np.meshgrid(a, b, indexing="ij")):
            np.testing.assert_array_equal(mine.numpy(), ref)
    finite_difference_check(lambda u, v: paddle.meshgrid(u, v)[0] * paddle.meshgrid(u, v)[1], a, b)


def test_diff_against_numpy():
    x = RNG.uniform(-1, 1, (3, 5))
    np.testing.assert_allclose(paddle.diff(t(x)).numpy(), np.diff(x))
    np.testing.assert_allclose(paddle.diff(t(x), n=2, axis=0).numpy(), np.diff(x, 2, 0))
    pre, post = np.ones((3, 1)), np.zeros((3, 2))
    np.testing.assert_allclose(paddle.diff(t(x), prepend=t(pre), append=t(post)).numpy(),
                               np.diff(x, prepend=pre, append=post))
    b = paddle.to_tensor([True, True, False])
    np.testing.assert_array_equal(paddle.diff(b).numpy(), [False, True])
    finite_difference_check(lambda v: paddle.diff(v, n=2), x)


def test_cross_and_dist_against_numpy():
    x, y = RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))
    np.testing.assert_allclose(paddle.cross(t(x), t(y)).numpy(), np.cross(x, y), rtol=1e-12)
    np.testing.assert_allclose(paddle.cross(t(x.T), t(y.T), axis=0).numpy(), np.cross(x.T, y.T, axis=0))
    finite_difference_check(paddle.cross, x, y)
    for p in (2, 1, 3.5, float("inf"), float("-inf")):
        np.testing.assert_allclose(paddle.dist(t(x), t(y), p).numpy(), [np.linalg.norm((x - y).ravel(), p)])
        finite_difference_check(lambda u, v, p=p: paddle.dist(u, v, p), x, y)
    np.testing.assert_array_equal(paddle.dist(t([1.0, 2.0]), t([1.0, 0.0]), 0).numpy(), [1.0])


def test_strided_slice_against_numpy_and_gradient():
    x = RNG.uniform(-1, 1, (4, 5, 6))
    out = paddle.strided_slice(t(x), axes=[0, 2], starts=[1, 5], ends=[4, 0], strides=[2, -2])
    np.testing.assert_array_equal(out.numpy(), x[1:4:2, :, 5:0:-2])
    finite_difference_check(lambda v: paddle.strided_slice(v, [1], [0], [5], [2]), x[:2])


def test_repeat_interleave_as_paddle_documents():
    x = paddle.to_tensor([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(paddle.repeat_interleave(x, 2, axis=1).numpy(),
                                  [[1, 1, 2, 2, 3, 3], [4, 4, 5, 5, 6, 6]])
    np.testing.assert_array_equal(paddle.repeat_interleave(x, paddle.to_tensor([1, 2]), axis=0).numpy(),
                                  [[1, 2, 3], [4, 5, 6], [4, 5, 6]])
    np.testing.assert_array_equal(paddle.repeat_interleave(x, 2).numpy(), np.repeat([1, 2, 3, 4, 5, 6], 2))
    finite_difference_check(lambda v: paddle.repeat_interleave(v, 3, axis=0), M)


def test_unique_as_paddle_documents():
    x = paddle.to_tensor([2, 3, 3, 1, 5, 3])
    out, index, inverse, counts = paddle.unique(x, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 5])
    np.testing.assert_array_equal(index.numpy(), [3, 0, 1, 4])
    np.testing.assert_array_equal(inverse.numpy(), [1, 2, 2, 0, 3, 2])
    np.testing.assert_array_equal(counts.numpy(), [1, 1, 3, 1])
    rows = paddle.unique(paddle.to_tensor([[2, 1, 3], [3, 0, 1], [2, 1, 3]]), axis=0)
    np.testing.assert_array_equal(rows.numpy(), [[2, 1, 3], [3, 0, 1]])
    assert paddle.unique(x).dtype == paddle.int64


def test_nonzero_as_paddle_documents():
    x1 = paddle.to_tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    np.testing.assert_array_equal(paddle.nonzero(x1).numpy(), [[0, 0], [1, 1], [2, 2]])
    parts = paddle.nonzero(paddle.to_tensor([0.0, 1.0, 0.0, 3.0]), as_tuple=True)
    assert len(parts) == 1 and parts[0].shape == [2, 1] and parts[0].dtype == paddle.int64
    np.testing.assert_array_equal(parts[0].numpy(), [[1], [3]])


def test_shape_increment_is_tensor_and_gradient_method():
    s = paddle.shape(paddle.zeros([3, 2]))
    assert s.dtype == paddle.int32
    np.testing.assert_array_equal(s.numpy(), [3, 2])
    data = paddle.zeros(shape=[1], dtype="float32")
    counter = paddle.increment(data)
    assert counter is data
    np.testing.assert_array_equal(data.numpy(), [1.0])
    with pytest.raises(ValueError, match="one element"):
        paddle.increment(paddle.zeros([2]))
    assert paddle.is_tensor(data) and not paddle.is_tensor(np.zeros(1))
    assert paddle.in_dynamic_mode()
    x = t([1.0, 2.0], stop_gradient=False)
    assert x.gradient() is None
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.gradient(), [2.0, 4.0])


def test_bernoulli_draws_with_the_given_probabilities_and_follows_seed():
    paddle.seed(7)
    p = paddle.to_tensor(np.array([0.0, 0.3, 1.0], dtype=np.float32))
    draws = np.stack([paddle.bernoulli(p).numpy() for _ in range(2000)])
    assert draws.dtype == np.float32 and set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(0), [0.0, 0.3, 1.0], atol=0.04)
    paddle.seed(7)
    np.testing.assert_array_equal(paddle.bernoulli(p).numpy(), draws[0])


def test_multinomial_frequencies_with_and_without_replacement():
    paddle.seed(3)
    w = paddle.to_tensor([0.2, 0.3, 0.5, 0.0])  # weights need not sum to 1
    draws = paddle.multinomial(w * 4, 4000, replacement=True)
    assert draws.shape == [4000] and draws.dtype == paddle.int64
    np.testing.assert_allclose(np.bincount(draws.numpy(), minlength=4) / 4000, [0.2, 0.3, 0.5, 0.0], atol=0.03)
    firsts = np.array([paddle.multinomial(w, 3).numpy() for _ in range(1500)])
    assert all(len(set(r)) == 3 and 3 not in r for r in firsts)
    np.testing.assert_allclose(np.bincount(firsts[:, 0], minlength=4) / 1500, [0.2, 0.3, 0.5, 0.0], atol=0.04)
    assert paddle.multinomial(paddle.ones([2, 5]), 2).shape == [2, 2]
    with pytest.raises(ValueError, match="exceeds"):
        paddle.multinomial(w, 5)


def test_put_along_axis_as_paddle_documents():
    x = paddle.to_tensor([[10, 30, 20], [60, 40, 50]])
    out = paddle.put_along_axis(x, paddle.to_tensor([[0]]), 99, 0)
    np.testing.assert_array_equal(out.numpy(), [[99, 99, 99], [60, 40, 50]])
    assert out.dtype == paddle.int64


@pytest.mark.parametrize("reduce", ["assign", "add", "multiply", "mul"])
def test_put_along_axis_against_numpy_and_gradient(reduce):
    arr = RNG.uniform(-1, 1, (3, 4))
    index = np.array([[1, 3, 1], [0, 0, 0], [2, 1, 2]])  # repeats: add and multiply accumulate
    values = RNG.uniform(-1, 1, (3, 3))
    ref = arr.copy()
    if reduce == "assign":
        index = np.array([[1, 3, 0], [0, 2, 1], [2, 1, 3]])
        np.put_along_axis(ref, index, values, 1)
    else:
        rows = np.repeat(np.arange(3), 3)
        ufunc = np.add if reduce == "add" else np.multiply
        ufunc.at(ref, (rows, index.ravel()), values.ravel())
    out = paddle.put_along_axis(t(arr), paddle.to_tensor(index), t(values), 1, reduce=reduce)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    finite_difference_check(
        lambda a, v: paddle.put_along_axis(a, paddle.to_tensor(index), v, 1, reduce=reduce), arr, values)


def test_put_along_axis_refuses_bad_indices_and_reduce():
    x = paddle.zeros([2, 3])
    with pytest.raises(ValueError, match="outside"):
        paddle.put_along_axis(x, paddle.to_tensor([[3]]), 1.0, 1)
    with pytest.raises(ValueError, match="reduce"):
        paddle.put_along_axis(x, paddle.to_tensor([[0]]), 1.0, 1, reduce="max")


def test_disable_static_keeps_eager_mode_and_selects_place():
    paddle.disable_static()
    paddle.disable_static(paddle.CPUPlace())
    assert paddle.get_device() == "cpu" and paddle.in_dynamic_mode()


def test_persistable_marks_parameters_and_persistable_buffers():
    assert not paddle.to_tensor([1.0]).persistable
    assert not paddle.to_tensor([1.0], stop_gradient=False).persistable
    net = paddle.nn.Sequential(paddle.nn.Linear(2, 3), paddle.nn.BatchNorm1D(3))
    assert all(p.persistable for p in net.parameters())
    assert all(b.persistable for b in net.buffers())
    layer = paddle.nn.Layer()
    layer.register_buffer("kept", paddle.zeros([1]))
    layer.register_buffer("scratch", paddle.zeros([1]), persistable=False)
    assert layer.kept.persistable and not layer.scratch.persistable
    assert layer.create_parameter([2]).persistable
    assert paddle.nn.ParameterList([paddle.to_tensor([1.0], stop_gradient=False)])[0].persistable
    x = paddle.zeros([1])
    x.persistable = True
    assert x.persistable
