"""set_default_dtype / get_default_dtype (python/crew/default_dtype.py): what follows the
default (to_tensor of Python floats, the random creation functions, layers' parameters and
buffers) and what does not (NumPy arrays, zeros/ones/full as in Paddle 2.4, norm layers in
16 bits), computation in float64, and the errors."""
import numpy as np
import pytest

import crew as paddle


@pytest.fixture(autouse=True)
def restore_default():
    yield
    paddle.set_default_dtype("float32")


def test_the_default_is_float32_and_names_and_dtypes_set_it():
    assert paddle.get_default_dtype() == "float32"
    for d, name in (("float64", "float64"), (np.float16, "float16"), (paddle.bfloat16, "bfloat16"),
                    (np.dtype("float32"), "float32")):
        paddle.set_default_dtype(d)
        assert paddle.get_default_dtype() == name
    with pytest.raises(TypeError, match=r"only supports \[float16, float32, float64, bfloat16\], but received int32"):
        paddle.set_default_dtype("int32")
    assert paddle.get_default_dtype() == "float32"


def test_creation_that_follows_the_default_and_creation_that_does_not():
    paddle.set_default_dtype("float64")
    assert paddle.to_tensor([1.5, 2.0]).dtype == paddle.float64
    assert paddle.to_tensor(0.1).numpy()[0] == 0.1  # no float32 rounding on the way
    assert paddle.to_tensor(np.array([1.5], dtype=np.float32)).dtype == paddle.float32
    assert paddle.to_tensor([1, 2]).dtype == paddle.int64
    for t in (paddle.rand([2]), paddle.randn([2]), paddle.uniform([2]), paddle.normal(shape=[2]),
              paddle.standard_normal([2])):
        assert t.dtype == paddle.float64
    assert paddle.zeros([2]).dtype == paddle.ones([2]).dtype == paddle.float32  # Paddle 2.4: float32
    assert paddle.rand([2], dtype="float32").dtype == paddle.float32


def test_layers_built_after_the_call_take_the_default_and_train_in_float64():
    paddle.set_default_dtype("float64")
    fc, bn, emb = paddle.nn.Linear(3, 2), paddle.nn.BatchNorm1D(2), paddle.nn.Embedding(4, 3)
    assert {p.dtype for p in fc.parameters() + bn.parameters() + emb.parameters()} == {paddle.float64}
    assert {b.dtype for b in bn.buffers()} == {paddle.float64}

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.scale = self.create_parameter([2], default_initializer=paddle.nn.initializer.Constant(0.5))

    assert Net().scale.dtype == paddle.float64
    w0, b0 = fc.weight.numpy().copy(), fc.bias.numpy().copy()
    x = np.random.default_rng(1).standard_normal((4, 3))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=fc.parameters())
    loss = (fc(paddle.to_tensor(x)) ** 2).mean()
    loss.backward()
    opt.step()
    y = x @ w0 + b0  # the same step in NumPy's float64: equal far below float32's precision
    np.testing.assert_allclose(loss.numpy(), (y ** 2).mean(), rtol=1e-13)
    np.testing.assert_allclose(fc.weight.numpy(), w0 - 0.1 * x.T @ (2 * y / y.size), rtol=1e-12)


def test_in_16_bits_norm_layers_keep_float32_parameters_as_paddles():
    paddle.set_default_dtype("bfloat16")
    assert paddle.nn.Linear(2, 2).weight.dtype == paddle.bfloat16
    for norm in (paddle.nn.LayerNorm(2), paddle.nn.BatchNorm1D(2), paddle.nn.GroupNorm(1, 2)):
        assert {p.dtype for p in norm.parameters()} == {paddle.float32}
    paddle.set_default_dtype("float32")
    assert paddle.nn.Linear(2, 2).weight.dtype == paddle.float32


def test_a_float64_convolution_is_a_clear_error():
    paddle.set_default_dtype("float64")
    conv = paddle.nn.Conv2D(1, 1, 3)
    assert conv.weight.dtype == paddle.float64
    with pytest.raises(paddle.DTypeError, match="conv2d: input must be float32, bfloat16 or float16, got float64"):
        conv(paddle.randn([1, 1, 4, 4]))
