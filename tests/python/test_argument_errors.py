"""Arguments crew does not accept: a TypeError or ValueError naming the argument and what is
accepted, never pybind11's internal texts ("Unable to cast Python instance", "incompatible
function arguments" with C++ signatures)."""
import numpy as np
import pytest

import crew

PYBIND_TEXTS = ("Unable to cast", "incompatible function arguments", "incompatible constructor arguments",
                "Invoked with", "-> crew._C", "PYBIND11")


def x():
    return crew.to_tensor(np.ones((2, 3), "float32"))


def linear_params():
    return crew.nn.Linear(2, 2).parameters()


CASES = [
    # (call, error type, text the message contains)
    (lambda: crew.sum(x(), axis="a"), TypeError, "sum(): argument 'axis' must be an int, a list or tuple of ints"),
    (lambda: crew.mean(x(), axis=[0, 0]), ValueError, "mean(): argument 'axis' names an axis twice"),
    (lambda: crew.sum(x(), axis=1 << 70), ValueError, "sum(): argument 'axis' = 1180591620717411303424 is out of range"),
    (lambda: crew.argmax(x(), axis=[0]), TypeError, "argmax(): argument 'axis' must be int (64-bit), got list"),
    (lambda: x()[1 << 70], IndexError, "index 1180591620717411303424 is out of range for axis 0 of size 2"),
    (lambda: x()[0, 1 << 70], IndexError, "out of range for axis 1 of size 3"),
    (lambda: crew.optimizer.SGD(learning_rate=0.1, parameters=[{"params": linear_params()}, 3]), TypeError,
     "SGD(): parameters mixes groups and tensors; entry 1 is a int"),
    (lambda: crew.optimizer.Adam(parameters=[3]), TypeError,
     "Adam(): argument 'parameters' must be an iterable of Tensors (model.parameters()), got int"),
    (lambda: crew.optimizer.SGD(learning_rate="a", parameters=linear_params()), TypeError,
     "SGD(): argument 'learning_rate' must be a float or an LRScheduler, got str"),
    (lambda: crew.reshape(x(), "ab"), TypeError, "reshape(): argument 'shape' must be a list of int (64-bit), got str"),
    (lambda: crew.nn.Linear("a", 2), TypeError, "Linear(): argument 'in_features' must be int (64-bit), got str"),
    (lambda: crew.sum(x()).backward(grad_tensor=[1.0]), TypeError,
     "backward(): argument 'grad_tensor' must be a Tensor or None, got list"),
    (lambda: crew.matmul(x(), 3), TypeError, "matmul(): argument 'y' must be Tensor, got int"),
    (lambda: crew.matmul(x()), TypeError, "matmul(): missing argument 'y'"),
    (lambda: crew.split(x(), "a"), TypeError, "split(): argument 'num_or_sections' must be an int or a list of ints"),
    (lambda: crew.concat([x(), 3]), TypeError, "concat(): argument 'x' must be a list of Tensor"),
    (lambda: crew.nn.ClipGradByGlobalNorm("a"), TypeError, "ClipGradByGlobalNorm(): argument 'clip_norm' must be float"),
    (lambda: x() + "a", TypeError, "unsupported operand type(s) for +"),
    (lambda: crew.optimizer.SGD(parameters=linear_params()).set_lr("a"), TypeError,
     "Optimizer.set_lr(): argument 1 must be float, got str ('a')"),
    (lambda: crew.vision.transforms.RandomCrop("a"), TypeError,
     "RandomCrop(): argument 'size' must be an int or (height, width), got str"),
    (lambda: crew.io.DistributedBatchSampler(crew.io.TensorDataset([x()]), 1, num_replicas="2", rank=0),
     TypeError, "DistributedBatchSampler(): argument 'num_replicas' must be an int or None, got str"),
]


@pytest.mark.parametrize("call,error,text", CASES, ids=[c[2][:40] for c in CASES])
def test_a_bad_argument_is_named_in_a_typed_error(call, error, text):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert text in message
    for internal in PYBIND_TEXTS:
        assert internal not in message


def test_sum_and_mean_accept_a_list_of_axes_as_paddle():
    a = np.arange(24, dtype="float32").reshape(2, 3, 4)
    t = crew.to_tensor(a)
    np.testing.assert_allclose(crew.sum(t, axis=[0, 2]).numpy(), a.sum(axis=(0, 2)))
    np.testing.assert_allclose(crew.mean(t, axis=(2, -3), keepdim=True).numpy(), a.mean(axis=(0, 2), keepdims=True))


def test_wrapped_functions_keep_their_names_and_docs():
    assert crew.reshape.__name__ == "reshape"
    assert "shape" in crew.reshape.__doc__
