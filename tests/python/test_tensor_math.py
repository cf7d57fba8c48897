"""Paddle 2.4's tensor creation, math, masks, indexing and printing (issue 30, item 1).
Each case follows an example of Paddle 2.4's API documentation and checks the values (or
the printed text) it documents."""
import math

import numpy as np
import pytest

import crew as paddle


def t(values, dtype="float32", stop_gradient=True):
    return paddle.to_tensor(np.array(values), dtype=dtype, stop_gradient=stop_gradient)


def test_creation_takes_shapes_as_lists_tuples_and_tensors():
    assert paddle.zeros([2, 3]).numpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    assert paddle.ones((2,), dtype="int64").dtype == paddle.int64
    assert paddle.full(paddle.to_tensor([2, 1], dtype="int64"), 2.5).numpy().tolist() == [[2.5], [2.5]]
    x = t([[1, 2], [3, 4]])
    assert paddle.zeros_like(x).shape == [2, 2] and paddle.ones_like(x, dtype="int32").dtype == paddle.int32
    assert paddle.full_like(x, 7).numpy().tolist() == [[7, 7], [7, 7]]
    assert paddle.arange(5).numpy().tolist() == [0, 1, 2, 3, 4] and paddle.arange(5).dtype == paddle.int64
    assert paddle.arange(3, 9, 2).numpy().tolist() == [3, 5, 7]
    assert np.allclose(paddle.arange(4.9).numpy(), [0, 1, 2, 3, 4]) and paddle.arange(4.9).dtype == paddle.float32
    assert np.allclose(paddle.linspace(0, 10, 5).numpy(), [0, 2.5, 5, 7.5, 10])
    assert paddle.eye(2, 3, dtype="int32").numpy().tolist() == [[1, 0, 0], [0, 1, 0]]


def test_random_creation_is_reproducible_under_seed():
    paddle.seed(102)
    a = [paddle.randn([2, 3]), paddle.rand([2, 3]), paddle.uniform([4], min=-1, max=1),
         paddle.normal(0.0, 2.0, [3]), paddle.randint(0, 5, [20])]
    paddle.seed(102)
    b = [paddle.randn([2, 3]), paddle.rand([2, 3]), paddle.uniform([4], min=-1, max=1),
         paddle.normal(0.0, 2.0, [3]), paddle.randint(0, 5, [20])]
    for u, v in zip(a, b):
        assert u.numpy().tolist() == v.numpy().tolist()
    r = a[4].numpy()
    assert a[4].dtype == paddle.int64 and r.min() >= 0 and r.max() <= 4
    assert 0 <= a[1].numpy().min() and a[1].numpy().max() < 1


def test_bool_dtype_and_comparisons():
    x, y = t([1.0, 2.0, 3.0]), t([1.0, 3.0, 2.0])
    m = paddle.equal(x, y)
    assert m.dtype == paddle.bool and m.numpy().tolist() == [True, False, False]
    assert (x > 1.5).numpy().tolist() == [False, True, True]
    assert paddle.to_tensor([True, False]).dtype == paddle.bool
    assert paddle.logical_and(t([True, False], "bool"), t([True, True], "bool")).numpy().tolist() == [True, False]
    assert paddle.logical_or(t([True, False], "bool"), t([False, False], "bool")).numpy().tolist() == [True, False]
    assert paddle.logical_xor(t([True, False], "bool"), t([True, True], "bool")).numpy().tolist() == [False, True]
    assert paddle.logical_not(t([True, False], "bool")).numpy().tolist() == [False, True]
    z = t([float("-inf"), -2, 3.6, float("inf"), 0, float("nan")])
    assert paddle.isnan(z).numpy().tolist() == [False, False, False, False, False, True]
    assert paddle.isinf(z).numpy().tolist() == [True, False, False, True, False, False]
    assert paddle.allclose(t([10000.0, 1e-07]), t([10000.1, 1e-08])).numpy().tolist() == [False]
    assert paddle.allclose(t([1.0, float("nan")]), t([1.0, float("nan")]), equal_nan=True).numpy().tolist() == [True]
    assert paddle.equal_all(t([1, 2, 3]), t([1, 2, 3])).numpy().tolist() == [True]
    assert paddle.equal_all(t([1, 2, 3]), t([1, 4, 3])).numpy().tolist() == [False]
    assert bool(paddle.equal_all(t([1, 2]), t([1, 2])))
    assert (t([1.0]) == None) is False and (t([1.0]) != None) is True  # noqa: E711 (Python's identity)


def test_where_clip_and_selection():
    x, y = t([0.9383, 0.1983, 3.2, 1.2]), t([1.0, 1.0, 1.0, 1.0])
    assert np.allclose(paddle.where(x > 1, x, y).numpy(), [1.0, 1.0, 3.2, 1.2])
    assert np.allclose(paddle.clip(t([[1.2, 3.5], [4.5, 6.4]]), min=3.5, max=5.0).numpy(), [[3.5, 3.5], [4.5, 5.0]])
    assert np.allclose(paddle.clip(t([[1.2, 3.5], [4.5, 6.4]]), min=2.0).numpy(), [[2.0, 3.5], [4.5, 6.4]])
    data = t([[1, 2], [3, 4], [5, 6]])
    assert paddle.gather(data, t([0, 1], "int32"), axis=0).numpy().tolist() == [[1, 2], [3, 4]]
    x = t([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    assert paddle.index_select(x, t([0, 1, 1], "int32"), axis=1).numpy().tolist() == [[1, 2, 2], [5, 6, 6], [9, 10, 10]]
    g = t([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]])
    assert paddle.gather_nd(g, t([[0, 1]], "int64")).numpy().tolist() == [[3, 4]]
    assert paddle.gather_nd(g, t([[0, 2, 1]], "int64")).numpy().tolist() == [6]
    xs = t([[1, 1], [2, 2], [3, 3]])
    upd = t([[1, 1], [2, 2], [3, 3], [4, 4]])
    idx = t([2, 1, 0, 1], "int64")
    assert paddle.scatter(xs, idx, upd, overwrite=False).numpy().tolist() == [[3, 3], [6, 6], [1, 1]]
    assert paddle.scatter(xs, idx, upd, overwrite=True).numpy().tolist() == [[3, 3], [4, 4], [1, 1]]
    mask = t([[True, False, False, False], [True, True, False, False], [True, False, False, False]], "bool")
    assert paddle.masked_select(x, mask).numpy().tolist() == [1, 5, 6, 9]


def test_topk_sort_argsort():
    d = t([[1, 4, 5, 7]])
    v, i = paddle.topk(d, k=1)
    assert v.numpy().tolist() == [[7]] and i.numpy().tolist() == [[3]]
    d2 = t([[2, 3, 4, 5], [6, 7, 8, 9]])
    v, i = paddle.topk(d2, k=1, axis=0, largest=False)
    assert v.numpy().tolist() == [[2, 3, 4, 5]] and i.numpy().tolist() == [[0, 0, 0, 0]]
    x = t([[5, 8, 9, 5], [0, 0, 1, 7], [6, 9, 2, 4]])
    assert paddle.sort(x, axis=0).numpy().tolist() == [[0, 0, 1, 4], [5, 8, 2, 5], [6, 9, 9, 7]]
    assert paddle.argsort(x, axis=1, descending=True).numpy().tolist() == [[2, 1, 0, 3], [3, 2, 0, 1],
                                                                             [1, 0, 3, 2]]


def test_unary_math_and_reductions():
    x = t([-0.4, -0.2, 0.1, 0.3])
    assert np.allclose(paddle.abs(x).numpy(), [0.4, 0.2, 0.1, 0.3])
    assert np.allclose(paddle.square(x).numpy(), [0.16, 0.04, 0.01, 0.09])
    assert np.allclose(paddle.sigmoid(x).numpy(), 1 / (1 + np.exp([0.4, 0.2, -0.1, -0.3])), atol=1e-6)
    assert np.allclose(paddle.erf(x).numpy(), [math.erf(v) for v in [-0.4, -0.2, 0.1, 0.3]], atol=1e-6)
    assert np.allclose(paddle.sqrt(t([0.1, 0.2, 0.3, 0.4])).numpy(), np.sqrt([0.1, 0.2, 0.3, 0.4]))
    assert np.allclose(paddle.rsqrt(t([0.1, 0.2, 0.3, 0.4])).numpy(), [3.16227766, 2.23606798, 1.82574186, 1.58113883])
    data = paddle.arange(12).reshape([3, 4])
    assert paddle.cumsum(data).numpy().tolist() == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66]
    assert paddle.cumsum(data, axis=0).numpy().tolist() == [[0, 1, 2, 3], [4, 6, 8, 10], [12, 15, 18, 21]]
    p = t([[0.2, 0.3, 0.5, 0.9], [0.1, 0.2, 0.6, 0.7]])
    assert np.allclose(paddle.prod(p).numpy(), [0.0002268])
    assert np.allclose(paddle.prod(p, -1).numpy(), [0.027, 0.0084])
    v = t([[1.0, 2.0, 3.0], [1.0, 4.0, 5.0]])
    assert np.allclose(paddle.var(v).numpy(), [2.66666667]) and paddle.var(v).shape == [1]
    assert np.allclose(paddle.var(v, axis=1).numpy(), [1.0, 4.33333333])
    assert np.allclose(paddle.std(v).numpy(), [1.63299316])
    assert np.allclose(paddle.std(v, unbiased=False).numpy(), [1.49071198])
    n = paddle.arange(24, dtype="float32").reshape([2, 3, 4]) - 12
    assert np.allclose(paddle.norm(n).numpy(), [34.0])
    assert np.allclose(paddle.norm(n, p=2, axis=[0, 1]).numpy(), [17.43559647, 16.91153526, 16.73320007, 16.91153526])
    assert np.allclose(paddle.norm(n, p=np.inf).numpy(), [12.0])
    assert np.allclose(paddle.max(v).numpy(), [5.0]) and paddle.min(v, axis=0).numpy().tolist() == [1, 2, 3]


def test_gradients_flow_through_the_new_ops():
    x = t([[1.0, -2.0], [3.0, 0.5]], stop_gradient=False)
    y = (paddle.abs(x) * paddle.sigmoid(x)).sum() + paddle.topk(x, 1)[0].sum() + paddle.max(x)
    y.backward()
    s = 1 / (1 + np.exp(-x.numpy()))
    want = np.sign(x.numpy()) * s + np.abs(x.numpy()) * s * (1 - s)
    want += np.array([[1, 0], [1, 0]]) + np.array([[0, 0], [1, 0]])
    assert np.allclose(x.grad.numpy(), want, atol=1e-6)
    z = t([1.0, 2.0, 3.0], stop_gradient=False)
    paddle.cast(z, "float64").astype("float32")[::-2].sum().backward()
    assert z.grad.numpy().tolist() == [1, 0, 1]


def test_shape_functions_over_lists():
    x = t([1, 2, 3], "int32")
    assert paddle.tile(x, [2, 1]).numpy().tolist() == [[1, 2, 3], [1, 2, 3]]
    assert paddle.expand(x, [2, 3]).numpy().tolist() == [[1, 2, 3], [1, 2, 3]]
    assert paddle.broadcast_to(x, (2, 3)).shape == [2, 3]
    img = t([[1, 2], [3, 4]])
    assert paddle.flip(img, [0, 1]).numpy().tolist() == [[4, 3], [2, 1]]
    r = t([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert paddle.roll(r, shifts=1).numpy().tolist() == [[9, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert paddle.roll(r, shifts=1, axis=0).numpy().tolist() == [[7, 8, 9], [1, 2, 3], [4, 5, 6]]
    parts = paddle.chunk(paddle.ones([3, 9, 5]), chunks=3, axis=1)
    assert [p.shape for p in parts] == [[3, 3, 5]] * 3
    assert [u.shape for u in paddle.unbind(paddle.ones([2, 3, 5]), axis=1)] == [[2, 5]] * 3
    assert paddle.concat((img, img), axis=1).shape == [2, 4]
    assert paddle.stack([img, img, img], axis=0).shape == [3, 2, 2]


def test_indexing_and_item_assignment():
    x = paddle.arange(24, dtype="float32").reshape([2, 3, 4])
    assert x[..., ::2].shape == [2, 3, 2]
    assert x[1, ::-1, 0].numpy().tolist() == [20, 16, 12]
    assert x[None, 0].shape == [1, 3, 4]
    assert x[:, None, :, -1].shape == [2, 1, 3]
    assert x[0, t([2, 0], "int64")].numpy()[:, 0].tolist() == [8, 0]
    assert x[x > 20].numpy().tolist() == [21, 22, 23]
    y = paddle.zeros([3, 4])
    y[0] = 1.0
    y[1:, ::2] = t([5.0, 6.0])
    y[y == 0] = -1
    y[..., 3] = paddle.to_tensor([7.0, 8.0, 9.0])
    assert y.numpy().tolist() == [[1, 1, 1, 7], [5, -1, 6, 8], [5, -1, 6, 9]]
    w = paddle.ones([2], dtype="float32")
    w.stop_gradient = False
    with pytest.raises(ValueError, match="in-place"):
        w[0] = 3.0


def test_in_place_methods_and_python_numbers():
    x = t([1.0, 2.0, 3.0])
    assert x.add_(t([1.0, 1.0, 1.0])) is x and x.numpy().tolist() == [2, 3, 4]
    x.scale_(2.0, bias=1.0)
    assert x.numpy().tolist() == [5, 7, 9]
    x.clip_(6.0, 8.0)
    assert x.numpy().tolist() == [6, 7, 8]
    x.zero_()
    assert x.numpy().tolist() == [0, 0, 0]
    x.fill_(4)
    assert x.numpy().tolist() == [4, 4, 4]
    assert float(t([2.5])) == 2.5 and int(t([7], "int64")) == 7
    assert [10, 20, 30][paddle.to_tensor([1])] == 20
    with pytest.raises(ValueError, match="one element"):
        float(t([1.0, 2.0]))


def test_printing_matches_paddle():
    x = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert str(x) == ("Tensor(shape=[2, 3], dtype=float32, place=Place(cpu), stop_gradient=True,\n"
                      "       [[1., 2., 3.],\n"
                      "        [4., 5., 6.]])")
    y = paddle.to_tensor([0.5, -1.25], stop_gradient=False)
    assert repr(y) == ("Tensor(shape=[2], dtype=float32, place=Place(cpu), stop_gradient=False,\n"
                       "       [ 0.50000000, -1.25000000])")
    b = paddle.to_tensor([True, False])
    assert str(b).endswith("dtype=bool, place=Place(cpu), stop_gradient=True,\n       [True , False])")
    assert str(paddle.to_tensor([1, 22], dtype="int64")).endswith("[1 , 22])")
    big = paddle.arange(2000, dtype="float32")
    assert str(big).endswith("[0.   , 1.   , 2.   , ..., 1997., 1998., 1999.])")
