"""crew.Tensor <-> NumPy: dtypes, copies, shared memory."""
import numpy as np
import pytest

import crew


def test_version():
    assert crew.__version__.count(".") == 2


def test_to_tensor_keeps_numpy_dtype_and_copies():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = crew.to_tensor(a)
    assert t.shape == [2, 3]
    assert t.dtype == crew.float64
    a[0, 0] = 100.0
    assert t.numpy()[0, 0] == 0.0  # to_tensor copied


def test_python_values_take_paddle_default_dtypes():
    assert crew.to_tensor([1.5, 2.0]).dtype == crew.float32
    assert crew.to_tensor([1, 2]).dtype == crew.int64
    assert crew.to_tensor(3).shape == [1]  # Paddle 2.4: a scalar becomes a [1] tensor
    assert crew.to_tensor([[1, 2]], dtype="float32").dtype == crew.float32


def test_numpy_shares_memory():
    t = crew.to_tensor(np.zeros((4,), dtype=np.float32))
    v = t.numpy()
    v[1] = 7.0
    assert t.numpy()[1] == 7.0
    del t
    assert v[1] == 7.0  # the array keeps the storage alive


def test_strided_input_and_array_protocol():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    t = crew.to_tensor(a)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert t.numpy().flags['C_CONTIGUOUS']


def test_item_and_bad_dtype():
    assert crew.to_tensor(2.5).item() == 2.5
    assert isinstance(crew.to_tensor(4).item(), int)
    with pytest.raises(ValueError, match="6 elements"):
        crew.to_tensor(np.zeros((2, 3))).item()
    with pytest.raises(TypeError, match="complex64"):
        crew.to_tensor(np.zeros(2, dtype=np.complex64))


def test_reshape_to_an_overflowing_shape_is_a_value_error():
    # Issue 29: [2^32, 2^32] wrapped to 0 elements, was accepted, and numpy() wrote elsewhere.
    empty = crew.to_tensor(np.zeros(0, "float32"))
    with pytest.raises(ValueError, match="more than"):
        crew.reshape(empty, [1 << 32, 1 << 32])
    assert crew.reshape(crew.to_tensor(np.zeros(6, "float32")), [2, -1]).shape == [2, 3]
