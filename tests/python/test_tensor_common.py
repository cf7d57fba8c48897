"""lerp, masked_fill, moveaxis, count_nonzero, nansum and nanmean (python/crew/tensor_common.py):
values against NumPy and Paddle's documented examples, gradients where Paddle has them, and the
errors for bad arguments."""
import numpy as np
import pytest

import crew as paddle


def t(values, dtype="float64", stop_gradient=True):
    return paddle.to_tensor(np.asarray(values, dtype=dtype), stop_gradient=stop_gradient)


def test_lerp_values_and_gradients_to_x_y_and_a_tensor_weight():
    x, y = t([1.0, 2, 3, 4], stop_gradient=False), t([10.0, 10, 10, 10], stop_gradient=False)
    np.testing.assert_allclose(paddle.lerp(x, y, 0.5).numpy(), [5.5, 6, 6.5, 7])  # Paddle's example
    w = t([0.0, 0.25, 0.5, 1.0], stop_gradient=False)
    out = x.lerp(y, w)
    np.testing.assert_allclose(out.numpy(), [1, 4, 6.5, 10])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 0.75, 0.5, 0])
    np.testing.assert_allclose(y.grad.numpy(), [0, 0.25, 0.5, 1])
    np.testing.assert_allclose(w.grad.numpy(), [9, 8, 7, 6])


def test_masked_fill_broadcasts_the_mask_and_routes_the_gradient_around_it():
    x = t([[1.0, 2, 3], [4, 5, 6]], stop_gradient=False)
    mask = paddle.to_tensor([True, False, True])
    out = paddle.masked_fill(x, mask, -1.5)
    np.testing.assert_array_equal(out.numpy(), [[-1.5, 2, -1.5], [-1.5, 5, -1.5]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [0, 1, 0]])
    filled = x.masked_fill(paddle.to_tensor([[True], [False]]), t(9.0))
    np.testing.assert_array_equal(filled.numpy(), [[9, 9, 9], [4, 5, 6]])
    ints = paddle.masked_fill(paddle.to_tensor([1, 2, 3]), mask, 7)
    assert ints.numpy().tolist() == [7, 2, 7] and ints.dtype == paddle.int64


def test_masked_fill_rejects_a_non_bool_mask_a_mask_that_grows_x_and_a_long_value():
    x = t([[1.0, 2], [3, 4]])
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        paddle.masked_fill(x, t([1.0, 0]), 0.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        paddle.masked_fill(t([1.0, 2]), paddle.to_tensor([[True, False], [False, True]]), 0.0)
    with pytest.raises(ValueError, match="one element"):
        paddle.masked_fill(x, paddle.to_tensor([True, False]), t([1.0, 2]))


@pytest.mark.parametrize("source,destination", [(0, 2), (-1, 0), ([0, 1], [2, 0]), ([2, 0], [0, 1])])
def test_moveaxis_as_numpy(source, destination):
    a = np.arange(24.0).reshape(2, 3, 4)
    out = paddle.moveaxis(t(a), source, destination)
    np.testing.assert_array_equal(out.numpy(), np.moveaxis(a, source, destination))
    np.testing.assert_array_equal(t(a).moveaxis(source, destination).numpy(), np.moveaxis(a, source, destination))


def test_moveaxis_errors_name_the_axes():
    with pytest.raises(ValueError, match="same length"):
        paddle.moveaxis(t(np.zeros((2, 3))), [0, 1], [1])
    with pytest.raises(ValueError, match="out of range"):
        paddle.moveaxis(t(np.zeros((2, 3))), 2, 0)
    with pytest.raises(ValueError, match="repeated axis"):
        paddle.moveaxis(t(np.zeros((2, 3))), [0, 0], [0, 1])


def test_count_nonzero_over_all_axes_one_axis_and_keepdim():
    a = np.array([[0, 1, 7, 0], [0, 0, 2, 0], [6, 0, 0, 0]])
    x = paddle.to_tensor(a)
    assert paddle.count_nonzero(x).numpy() == 4 and paddle.count_nonzero(x).dtype == paddle.int64
    np.testing.assert_array_equal(paddle.count_nonzero(x, axis=1).numpy(), np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(paddle.count_nonzero(x, axis=[0, 1], keepdim=True).numpy(), [[4]])
    np.testing.assert_array_equal(t([0.0, -0.0, 1e-30]).count_nonzero().numpy(), 1)


def test_nansum_and_nanmean_skip_nans_and_their_gradients_skip_them_too():
    a = np.array([[np.nan, 0.3, 0.5, 0.9], [0.1, 0.2, -np.nan, 0.7]])  # Paddle's example
    x = t(a, stop_gradient=False)
    np.testing.assert_allclose(paddle.nansum(x).numpy(), np.nansum(a))
    np.testing.assert_allclose(paddle.nansum(x, axis=0).numpy(), np.nansum(a, axis=0))
    np.testing.assert_allclose(paddle.nansum(x, axis=-1, keepdim=True).numpy(), np.nansum(a, -1, keepdims=True))
    np.testing.assert_allclose(paddle.nanmean(x, axis=1).numpy(), np.nanmean(a, axis=1))
    paddle.nanmean(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(np.isnan(a), 0, 1 / 6))
    assert np.isnan(paddle.nanmean(t([np.nan, np.nan])).numpy())
    assert paddle.nansum(x, dtype="float32").dtype == paddle.float32
    with pytest.raises(TypeError, match="floating"):
        paddle.nanmean(paddle.to_tensor([1, 2]))


def test_atan2_matches_numpy_in_every_quadrant_and_on_the_axes():
    xs = np.array([0.0, 1, -1, 0, 2, -3, 0.5, -0.5, 1e-3, 0, 4, -4])
    ys = np.array([1.0, 0, 0, -1, -2, -1, 3, -3, -1, 0, 1e-9, -1e-9])
    np.testing.assert_allclose(paddle.atan2(t(xs), t(ys)).numpy(), np.arctan2(xs, ys), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(t(xs, "float32").atan2(t(ys, "float32")).numpy(), np.arctan2(xs, ys), rtol=1e-6)
    ints = paddle.atan2(paddle.to_tensor([1, -1, 0]), paddle.to_tensor([0, 0, -2]))
    assert ints.dtype == paddle.float64
    np.testing.assert_allclose(ints.numpy(), np.arctan2([1, -1, 0], [0, 0, -2]))
    np.testing.assert_allclose(paddle.atan2(t([[1.0], [-1.0]]), t([1.0, -1.0])).numpy(),
                               np.arctan2([[1.0], [-1.0]], [1.0, -1.0]))  # broadcast


def test_atan2_gradient_is_finite_everywhere_and_exact_off_the_origin():
    xs = np.array([0.0, 1, -1, 0, 2, -3, 0.5, -0.5, 0])
    ys = np.array([1.0, 0, 0, -1, -2, -1, 3, -3, 0])
    x, y = t(xs, stop_gradient=False), t(ys, stop_gradient=False)
    paddle.atan2(x, y).sum().backward()
    r2 = xs ** 2 + ys ** 2
    r2[-1] = np.inf  # the origin: gradient 0
    np.testing.assert_allclose(x.grad.numpy(), ys / r2, atol=1e-15)
    np.testing.assert_allclose(y.grad.numpy(), -xs / r2, atol=1e-15)
    with pytest.raises(TypeError, match="one dtype"):
        paddle.atan2(t([1.0]), t([1.0], "float32"))


def test_scatter_nd_add_as_paddles_example_with_gradients():
    x = paddle.zeros([3, 5, 9, 10])
    index = paddle.to_tensor([[[1, 1], [0, 1], [1, 0]], [[0, 0], [1, 1], [1, 2]]])
    updates = paddle.ones([2, 3, 9, 10])
    updates.stop_gradient = False
    out = paddle.scatter_nd_add(x, index, updates)
    assert out.shape == [3, 5, 9, 10]
    ref = np.zeros([3, 5, 9, 10])
    np.add.at(ref, tuple(np.array([[1, 1], [0, 1], [1, 0], [0, 0], [1, 1], [1, 2]]).T), 1.0)
    np.testing.assert_array_equal(out.numpy(), ref)  # [1, 1] twice: 2
    (out * t(np.arange(3 * 5 * 9 * 10.0).reshape(3, 5, 9, 10), "float32")).sum().backward()
    np.testing.assert_array_equal(updates.grad.numpy()[0, 0], np.arange(3 * 5 * 9 * 10.0).reshape(3, 5, 9, 10)[1, 1])
    v = t([0.0, 1, 2, 3, 4, 5], stop_gradient=False)
    out = v.scatter_nd_add(paddle.to_tensor([[1], [5], [1]]), t([9.0, 10, 11]))
    np.testing.assert_array_equal(out.numpy(), [0, 21, 2, 3, 4, 15])
    out.sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.ones(6))


def test_scatter_nd_add_errors_name_the_shapes():
    x = t(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="must end in k"):
        paddle.scatter_nd_add(x, paddle.to_tensor([[0, 1, 2]]), t([1.0]))
    with pytest.raises(ValueError, match=r"x.shape\[k:\] = \[1, 4\]"):
        paddle.scatter_nd_add(x, paddle.to_tensor([[0]]), t([1.0, 2]))
    with pytest.raises(IndexError, match=r"index \[3\] is out of range"):
        paddle.scatter_nd_add(x, paddle.to_tensor([[3]]), t(np.ones((1, 4))))
