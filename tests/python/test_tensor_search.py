"""bincount, histogram, searchsorted, bucketize, kthvalue and mode (python/crew/tensor_search.py):
Paddle's documented examples, NumPy references, the values' gradients, and errors."""
import numpy as np
import pytest

import crew as paddle


def test_bincount_and_histogram_as_paddles_examples():
    x = paddle.to_tensor([1, 2, 1, 4, 5])
    assert paddle.bincount(x).numpy().tolist() == [0, 2, 1, 0, 1, 1]
    assert paddle.bincount(x).dtype == paddle.int64
    w = paddle.to_tensor([2.1, 0.4, 0.1, 0.5, 0.5])
    np.testing.assert_allclose(x.bincount(weights=w).numpy(), [0, 2.2, 0.4, 0, 0.5, 0.5], rtol=1e-6)
    assert paddle.bincount(x, minlength=8).numpy().tolist() == [0, 2, 1, 0, 1, 1, 0, 0]
    assert paddle.histogram(paddle.to_tensor([1, 2, 1]), bins=4, min=0, max=3).numpy().tolist() == [0, 2, 1, 0]
    a = np.random.default_rng(0).standard_normal(200)
    np.testing.assert_array_equal(paddle.histogram(paddle.to_tensor(a), bins=7).numpy(), np.histogram(a, 7)[0])
    np.testing.assert_array_equal(paddle.histogram(paddle.to_tensor(a), bins=5, min=-1, max=1).numpy(),
                                  np.histogram(a, 5, range=(-1, 1))[0])


def test_bincount_and_histogram_errors():
    with pytest.raises(ValueError, match="non-negative"):
        paddle.bincount(paddle.to_tensor([1, -2]))
    with pytest.raises(ValueError, match="1-d int tensor"):
        paddle.bincount(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="must match"):
        paddle.bincount(paddle.to_tensor([1, 2]), weights=paddle.to_tensor([1.0]))
    with pytest.raises(ValueError, match="max"):
        paddle.histogram(paddle.to_tensor([1.0]), bins=3, min=2, max=1)


def test_searchsorted_and_bucketize_as_paddles_examples():
    seq = paddle.to_tensor([[1, 3, 5, 7, 9, 11], [2, 4, 6, 8, 10, 12]])
    values = paddle.to_tensor([[3, 6, 9, 10], [3, 6, 9, 10]])
    assert paddle.searchsorted(seq, values).numpy().tolist() == [[1, 3, 4, 5], [1, 2, 4, 4]]
    assert paddle.searchsorted(seq, values, right=True).numpy().tolist() == [[2, 3, 5, 5], [1, 3, 4, 5]]
    assert paddle.searchsorted(seq, values, out_int32=True).dtype == paddle.int32
    one = paddle.to_tensor([1.0, 3, 5])
    assert paddle.searchsorted(one, paddle.to_tensor([[0.5, 3.0], [6.0, 5.0]])).numpy().tolist() == [[0, 1], [3, 2]]
    x = paddle.to_tensor([[0, 8, 4, 16], [-1, 2, 8, 4]])
    assert paddle.bucketize(x, paddle.to_tensor([2, 4, 8, 16])).numpy().tolist() == [[0, 2, 1, 3], [0, 0, 2, 1]]
    assert x.bucketize(paddle.to_tensor([2, 4, 8, 16]), right=True).numpy().tolist() == [[0, 3, 2, 4], [0, 1, 3, 2]]
    with pytest.raises(ValueError, match="agree on all but the last axis"):
        paddle.searchsorted(seq, paddle.to_tensor([[1, 2]] * 3))
    with pytest.raises(ValueError, match="must be 1-d"):
        paddle.bucketize(x, seq)


def test_kthvalue_values_indices_and_gradient():
    a = np.array([[3.0, 1, 2], [0, 5, 4]])
    x = paddle.to_tensor(a, stop_gradient=False)
    v, i = paddle.kthvalue(x, 2)
    np.testing.assert_array_equal(v.numpy(), [2, 4])
    assert i.numpy().tolist() == [2, 2] and i.dtype == paddle.int64
    v0, i0 = x.kthvalue(1, axis=0, keepdim=True)
    np.testing.assert_array_equal(v0.numpy(), [[0, 1, 2]])
    assert i0.numpy().tolist() == [[1, 0, 0]]
    (v * paddle.to_tensor([1.0, 10.0], dtype="float64")).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 1], [0, 0, 10]])
    with pytest.raises(ValueError, match=r"k must be in \[1, 3\]"):
        paddle.kthvalue(x, 4)


def test_mode_as_paddles_example_and_its_gradient():
    x = paddle.to_tensor([[[1, 2, 2], [2, 3, 3]], [[0, 5, 5], [9, 9, 0]]], dtype="float32", stop_gradient=False)
    v, i = paddle.mode(x, 2)
    assert v.numpy().tolist() == [[2, 3], [5, 9]] and i.numpy().tolist() == [[2, 2], [2, 1]]
    v.sum().backward()
    assert x.grad.numpy().tolist() == [[[0, 0, 1], [0, 0, 1]], [[0, 0, 1], [0, 1, 0]]]
    tie, where = paddle.mode(paddle.to_tensor([[4, 1, 4, 1]]), axis=-1, keepdim=True)
    assert tie.numpy().tolist() == [[1]] and where.numpy().tolist() == [[3]]  # the smaller on a tie
    v0, i0 = paddle.mode(paddle.to_tensor([[1, 2], [1, 3], [2, 3]]), axis=0)
    assert v0.numpy().tolist() == [1, 3] and i0.numpy().tolist() == [1, 2]
