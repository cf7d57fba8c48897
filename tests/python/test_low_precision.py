"""bfloat16 / float16 tensors: dtypes, astype, NumPy interop, the 16-bit kernels and their
gradients against float32, and the errors of ops without a 16-bit kernel."""
import numpy as np
import pytest

import crew


def _ones(shape, dtype="float32"):
    return crew.to_tensor(np.ones(shape, np.float32)).astype(dtype)

def _bf16_round(a):
    """float32 -> nearest-even bfloat16 value (as float32), NaN kept."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out)


def test_dtypes_and_names():
    assert crew.bfloat16 == crew.dtype.bfloat16
    assert crew.dtype.__members__["float16"] == crew.float16
    t = _ones([2, 3], "bfloat16")
    assert t.dtype == crew.bfloat16
    assert t.astype(crew.float16).dtype == crew.float16
    assert "dtype=bfloat16" in str(t)


def test_float16_is_native_numpy_both_ways():
    a = np.array([1.0, 0.1, 65504.0, np.inf, -0.0], np.float16)
    t = crew.to_tensor(a)
    assert t.dtype == crew.float16
    back = t.numpy()
    assert back.dtype == np.float16
    np.testing.assert_array_equal(back, a)
    # float32 -> float16 rounds as NumPy does (nearest even), NaN and overflow included.
    x = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520.0, np.nan, 1e-7, 2 ** -25], np.float32)
    got = crew.to_tensor(x).astype("float16").numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(np.float16))


def test_bfloat16_numpy_is_a_float32_copy_rounded_to_nearest_even():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000)).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 1 + 2 ** -8]  # the last one is a tie: rounds to 1.0
    t = crew.to_tensor(x, dtype="bfloat16")
    assert t.dtype == crew.bfloat16
    got = t.numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _bf16_round(x))
    assert got[3] == 1.0


def test_bf16_matmul_and_linear_match_float32():
    rng = np.random.default_rng(1)
    a = _bf16_round(rng.uniform(-1, 1, (3, 17, 33)).astype(np.float32))
    b = _bf16_round(rng.uniform(-1, 1, (33, 9)).astype(np.float32))
    want = a @ b
    got = crew.matmul(crew.to_tensor(a).astype("bfloat16"), crew.to_tensor(b).astype("bfloat16"))
    assert got.dtype == crew.bfloat16
    np.testing.assert_allclose(got.numpy(), want, atol=1e-2 * np.abs(want).max())
    lin = crew.nn.Linear(33, 9)
    x = crew.to_tensor(a)
    want = lin(x).numpy()
    lin.to(dtype="bfloat16")
    assert lin.weight.dtype == crew.bfloat16
    y = lin(x.astype("bfloat16"))
    assert y.dtype == crew.bfloat16
    np.testing.assert_allclose(y.numpy(), want, atol=2e-2 * np.abs(want).max())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_gradients_keep_the_dtype(dtype):
    conv = crew.nn.Conv2D(3, 4, 3, padding=1)
    conv.to(dtype=dtype)
    x = crew.to_tensor(np.random.default_rng(2).uniform(-1, 1, (2, 3, 5, 5)).astype("float32")).astype(dtype)
    x.stop_gradient = False
    y = crew.nn.functional.relu(conv(x))
    y.backward(_ones(y.shape, dtype))
    assert x.grad.dtype == getattr(crew, dtype)
    assert conv.weight.grad.dtype == getattr(crew, dtype)
    assert conv.bias.grad.dtype == getattr(crew, dtype)


def test_mixed_dtypes_and_missing_kernels_are_dtype_errors():
    a = _ones([2, 2])
    with pytest.raises(crew.DTypeError, match="matmul: dtypes differ"):
        crew.matmul(a, a.astype("bfloat16"))
    with pytest.raises(TypeError, match="bfloat16"):
        crew.nn.functional.elu(a.astype("bfloat16"))
    with pytest.raises(ValueError):  # DTypeError is a ValueError too
        crew.nn.functional.elu(a.astype("float16"))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_layer_norm_16_bit_input_float32_parameters(dtype):
    rng = np.random.default_rng(4)
    x = crew.to_tensor(rng.uniform(-2, 2, (3, 8)).astype("float32")).astype(dtype)
    w = crew.to_tensor(rng.uniform(0.5, 1.5, 8).astype("float32"))
    y = crew.nn.functional.layer_norm(x, [8], weight=w)
    assert y.dtype == getattr(crew, dtype)
    want = crew.nn.functional.layer_norm(x.astype("float32"), [8], weight=w)
    np.testing.assert_allclose(y.astype("float32").numpy(), want.numpy(), atol=3e-2, rtol=2e-2)


def test_safetensors_round_trip(tmp_path):
    sd = {"w": crew.to_tensor(np.array([[1.5, -0.1]], np.float32)).astype("bfloat16"),
          "h": crew.to_tensor(np.array([0.1], np.float16))}
    path = str(tmp_path / "m.pdparams")
    crew.save(sd, path)
    back = crew.load(path)
    assert back["w"].dtype == crew.bfloat16 and back["h"].dtype == crew.float16
    np.testing.assert_array_equal(back["w"].numpy(), sd["w"].numpy())
    np.testing.assert_array_equal(back["h"].numpy(), sd["h"].numpy())


def test_astype_and_cast_are_differentiable():
    w = crew.to_tensor(np.arange(6, dtype=np.float32).reshape(3, 2) / 7)
    w.stop_gradient = False
    x = _ones([4, 3], "bfloat16")
    y = crew.matmul(x, w.astype("bfloat16"))
    y.backward(_ones([4, 2], "bfloat16"))
    assert w.grad.dtype == crew.float32
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 2), 4.0, np.float32))
    assert crew.cast(w, "float16").dtype == crew.float16
