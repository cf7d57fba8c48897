"""crew.nn.initializer: Paddle's paddle.nn.initializer, writing NumPy values into parameters.

    w = paddle.ParamAttr(initializer=paddle.nn.initializer.KaimingNormal())
    conv = paddle.nn.Conv2D(3, 16, 3, weight_attr=w)

An initializer is called on a parameter (`init(param)`) and fills it in place; `init.value(shape)`
returns the array. Fans follow Paddle's _compute_fans: a 2-D weight [in, out] (Linear's layout)
has fan_in = shape[0], fan_out = shape[1]; a conv weight [out, in/groups, *k] has
fan_in = shape[1] * prod(k), fan_out = shape[0] * prod(k); 1-D and 0-D: fan_in = fan_out = size.
Random values come from NumPy's global generator, which crew.seed (paddle.seed) seeds too.
"""
import math

import numpy as np


def _fans(shape):
    shape = [int(s) for s in shape]
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    """Paddle's calculate_gain: the recommended gain for a nonlinearity."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose",
              "conv3d_transpose", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: nonlinearity '{nonlinearity}' is not supported")


class Initializer:
    """Base class: subclasses define value(shape) -> np.ndarray (float64 is fine)."""

    def value(self, shape):
        raise NotImplementedError

    def __call__(self, param, block=None):
        """Fills `param` (a crew Tensor) in place; returns it."""
        target = param.numpy()
        target[...] = np.asarray(self.value(list(param.shape))).reshape(target.shape)
        return param


class Constant(Initializer):
    def __init__(self, value=0.0):
        self._v = float(value)

    def value(self, shape):
        return np.full(shape, self._v)


class Normal(Initializer):
    def __init__(self, mean=0.0, std=1.0, name=None):
        self._mean, self._std = float(mean), float(std)

    def value(self, shape):
        return np.random.normal(self._mean, self._std, shape)


class TruncatedNormal(Initializer):
    """Normal(mean, std) redrawn outside [mean - 2 std, mean + 2 std] (Paddle's truncation)."""

    def __init__(self, mean=0.0, std=1.0, name=None):
        self._mean, self._std = float(mean), float(std)

    def value(self, shape):
        out = np.random.normal(0.0, 1.0, shape)
        bad = np.abs(out) > 2.0
        while bad.any():
            out[bad] = np.random.normal(0.0, 1.0, int(bad.sum()))
            bad = np.abs(out) > 2.0
        return self._mean + self._std * out


class Uniform(Initializer):
    def __init__(self, low=-1.0, high=1.0, name=None):
        if low > high:
            raise ValueError(f"Uniform: low ({low}) must be <= high ({high})")
        self._low, self._high = float(low), float(high)

    def value(self, shape):
        return np.random.uniform(self._low, self._high, shape)


class _Xavier(Initializer):
    """Xavier/Glorot: the fans from the shape unless given."""

    def __init__(self, fan_in=None, fan_out=None, gain=1.0, name=None):
        self._fan_in, self._fan_out, self._gain = fan_in, fan_out, float(gain)

    def _fan_sum(self, shape):
        fi, fo = _fans(shape)
        fi = fi if self._fan_in is None else self._fan_in
        fo = fo if self._fan_out is None else self._fan_out
        return fi + fo


class XavierNormal(_Xavier):
    """std = gain * sqrt(2 / (fan_in + fan_out))."""

    def value(self, shape):
        return np.random.normal(0.0, self._gain * math.sqrt(2.0 / self._fan_sum(shape)), shape)


class XavierUniform(_Xavier):
    """U(-limit, limit), limit = gain * sqrt(6 / (fan_in + fan_out))."""

    def value(self, shape):
        limit = self._gain * math.sqrt(6.0 / self._fan_sum(shape))
        return np.random.uniform(-limit, limit, shape)


class KaimingNormal(Initializer):
    """std = gain / sqrt(fan_in), gain = calculate_gain(nonlinearity, negative_slope)."""

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu"):
        self._fan_in, self._slope, self._nl = fan_in, negative_slope, nonlinearity

    def value(self, shape):
        fi = _fans(shape)[0] if self._fan_in is None else self._fan_in
        std = calculate_gain(self._nl, self._slope) / math.sqrt(float(fi))
        return np.random.normal(0.0, std, shape)


class KaimingUniform(Initializer):
    """U(-limit, limit), limit = gain * sqrt(3 / fan_in)."""

    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu"):
        self._fan_in, self._slope, self._nl = fan_in, negative_slope, nonlinearity

    def value(self, shape):
        fi = _fans(shape)[0] if self._fan_in is None else self._fan_in
        limit = calculate_gain(self._nl, self._slope) * math.sqrt(3.0 / float(fi))
        return np.random.uniform(-limit, limit, shape)


class Assign(Initializer):
    """The given values (a NumPy array, a list or a Tensor) of the parameter's shape."""

    def __init__(self, value, name=None):
        self._value = value

    def value(self, shape):
        v = self._value.numpy() if hasattr(self._value, "numpy") else np.asarray(self._value)
        if int(np.prod(v.shape)) != int(np.prod(shape)):
            raise ValueError(f"Assign: the value has shape {list(v.shape)}, the parameter {list(shape)}")
        return v.reshape(shape)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix over [shape[0], prod(shape[1:])], times gain (Paddle's rule:
    QR of a normal matrix, signs fixed by diag(R))."""

    def __init__(self, gain=1.0, name=None):
        self._gain = float(gain)

    def value(self, shape):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the parameter needs 2 or more dimensions, got shape {list(shape)}")
        rows, cols = int(shape[0]), int(np.prod(shape[1:]))
        flat = np.random.normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self._gain * q.reshape(shape)


# Paddle's 1.x spellings, still exported by paddle.nn.initializer.
ConstantInitializer = Constant
NormalInitializer = Normal
UniformInitializer = Uniform

__all__ = ["Initializer", "Constant", "Normal", "TruncatedNormal", "Uniform", "XavierNormal",
           "XavierUniform", "KaimingNormal", "KaimingUniform", "Assign", "Orthogonal", "calculate_gain"]
