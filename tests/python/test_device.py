"""Places and devices from Python: Paddle's names, honest on a build without CUDA and on a
build with CUDA on a machine without a GPU (these tests need no GPU)."""
import numpy as np
import pytest

import crew
import crew as paddle

CUDA = paddle.is_compiled_with_cuda()
# What asking for a GPU says where there is none.
NO_GPU = "does not exist" if CUDA else "not compiled with CUDA"
pytestmark = pytest.mark.skipif(CUDA and paddle.device.cuda.device_count() > 0,
                                reason="describes machines without a usable GPU")


def test_places_print_as_paddle_prints_them():
    assert repr(paddle.CPUPlace()) == "Place(cpu)"
    assert str(paddle.CUDAPlace(1)) == "Place(gpu:1)"
    assert repr(paddle.CUDAPinnedPlace()) == "Place(gpu_pinned)"
    assert paddle.CPUPlace().is_cpu_place() and not paddle.CPUPlace().is_gpu_place()
    assert paddle.CUDAPlace(2).gpu_device_id() == 2
    assert paddle.CPUPlace() == paddle.CPUPlace() and paddle.CUDAPlace(0) != paddle.CUDAPlace(1)


def test_device_queries_are_honest_without_cuda():
    assert paddle.device.is_compiled_with_cuda() is CUDA
    assert paddle.device.cuda.device_count() == 0
    assert paddle.get_device() == "cpu"
    assert paddle.set_device("cpu") == paddle.CPUPlace()
    assert paddle.device.get_device() == "cpu"
    gpu_error = ("set_device: 'gpu' does not exist: 0 gpu device" if CUDA
                 else "The device should not be 'gpu', since crew is not compiled with CUDA")
    with pytest.raises(ValueError, match=gpu_error):
        paddle.set_device("gpu")
    with pytest.raises(ValueError, match="'gpu:1' does not exist" if CUDA else "The device should not be 'gpu:1'"):
        paddle.device.set_device("gpu:1")
    with pytest.raises(ValueError, match="The device must be a string which is like 'cpu', 'gpu'"):
        paddle.set_device("tpu")
    assert paddle.get_device() == "cpu"


def test_tensors_know_their_place_and_copies_are_explicit():
    t = paddle.to_tensor([1.0, 2.0])
    assert t.place == paddle.CPUPlace()
    assert repr(t.place) == "Place(cpu)"
    c = t.cpu()
    np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])
    assert paddle.to_tensor([1, 2], place="cpu").place == paddle.CPUPlace()
    assert paddle.to_tensor([1, 2], place=paddle.CPUPlace()).place == paddle.CPUPlace()
    with pytest.raises(paddle.DeviceError, match="gpu:0 does not exist \\(0 GPU" if CUDA
                       else "to: no backend for gpu:0 \\(crew is not compiled with CUDA\\)"):
        t.cuda()
    with pytest.raises(RuntimeError, match=NO_GPU):
        paddle.to_tensor([1.0], place=paddle.CUDAPlace(0))
    with pytest.raises(TypeError, match="place: expected a crew Place"):
        paddle.to_tensor([1.0], place=3)


def test_layer_to_moves_and_converts_in_place():
    net = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    weight = net.weight
    assert net.to("cpu") is net and net.weight is weight
    net.to(dtype="float64")
    assert net.weight.dtype == paddle.float64 and net.bias.dtype == paddle.float64
    assert weight.dtype == paddle.float64  # the same tensor, converted in place
    x = paddle.to_tensor(np.ones((4, 3)), dtype="float64")
    before = net.weight.numpy().copy()
    net(x).sum().backward()
    opt.step()  # the optimizer built before the conversion updates the converted weight
    assert not np.allclose(net.weight.numpy(), before)
    with pytest.raises(ValueError, match="floating-point"):
        net.to(dtype="int64")
    with pytest.raises(RuntimeError, match=NO_GPU):
        net.to("gpu")
