"""bitwise_and/or/xor/not and the & | ^ ~ operators (python/crew/tensor_bitwise.py): integer
results as NumPy's (Paddle's examples), bool operands stay logical, errors for other dtypes."""
import numpy as np
import pytest

import crew as paddle


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_bitwise_ops_on_integers_as_numpy(dtype):
    rng = np.random.default_rng(2)
    a = rng.integers(0 if dtype == "uint8" else -100, 100, (3, 4)).astype(dtype)
    b = rng.integers(0 if dtype == "uint8" else -100, 100, (4,)).astype(dtype)  # broadcast
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for fn, ref, op in ((paddle.bitwise_and, np.bitwise_and, x & y), (paddle.bitwise_or, np.bitwise_or, x | y),
                        (paddle.bitwise_xor, np.bitwise_xor, x ^ y)):
        out = fn(x, y)
        assert out.dtype == x.dtype
        np.testing.assert_array_equal(out.numpy(), ref(a, b))
        np.testing.assert_array_equal(op.numpy(), ref(a, b))
    np.testing.assert_array_equal(paddle.bitwise_not(x).numpy(), np.invert(a))
    np.testing.assert_array_equal((~x).numpy(), np.invert(a))
    np.testing.assert_array_equal(x.bitwise_and(3).numpy(), a & 3)


def test_paddles_examples_and_bool_operands():
    x, y = paddle.to_tensor([-5, -1, 1]), paddle.to_tensor([4, 2, -3])
    assert paddle.bitwise_and(x, y).numpy().tolist() == [0, 2, 1]
    assert paddle.bitwise_or(x, y).numpy().tolist() == [-1, -1, -3]
    assert paddle.bitwise_xor(x, y).numpy().tolist() == [-1, -3, -4]
    assert paddle.bitwise_not(x).numpy().tolist() == [4, 0, -2]
    t, f = paddle.to_tensor([True, True, False]), paddle.to_tensor([True, False, False])
    assert paddle.bitwise_and(t, f).numpy().tolist() == [True, False, False]
    assert (t ^ f).numpy().tolist() == [False, True, False] and (~t).numpy().tolist() == [False, False, True]


def test_bitwise_errors_name_the_dtypes():
    with pytest.raises(TypeError, match="bool or integer tensor, got dtype.float32"):
        paddle.bitwise_and(paddle.to_tensor([1.0]), paddle.to_tensor([1.0]))
    with pytest.raises(TypeError, match="one dtype"):
        paddle.bitwise_or(paddle.to_tensor([1], dtype="int32"), paddle.to_tensor([1]))
    with pytest.raises(TypeError, match="bool or integer"):
        paddle.bitwise_not(paddle.to_tensor([1.5]))
