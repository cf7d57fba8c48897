"""crew.nn and crew.optimizer from Python: the seed's MyNet subclassed as in the seed."""
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import crew
import crew.nn.functional as F


def _example():
    """examples/python/train_cnn.py, the seed's program: its MyNet is the one tested here."""
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "train_cnn.py"
    spec = importlib.util.spec_from_file_location("train_cnn_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def MyNet(num_classes=1):
    """The seed's network, line for line, for 1x28x28 inputs (Fashion-MNIST)."""
    return _example().MyNet(num_classes, in_channels=1, image_size=28)


def batch(seed, n=8):
    rng = np.random.default_rng(seed)
    x = crew.to_tensor(rng.random((n, 1, 28, 28), dtype=np.float32))
    y = crew.to_tensor(rng.integers(0, 10, (n, 1)).astype(np.int64))
    return x, y


def test_parameters_are_registered_in_the_seeds_order():
    names = [n for n, _ in MyNet(10).named_parameters()]
    assert names == [f"{l}.{p}" for l in ("conv1", "conv2", "conv3", "linear1", "linear2")
                     for p in ("weight", "bias")]
    assert list(MyNet(10).state_dict()) == names
    assert all(not p.stop_gradient for p in MyNet(10).parameters())


def test_python_mynet_trains_exactly_as_the_cpp_mynet():
    cpp = crew._C.nn.MyNet(10, 1, 28)
    py = MyNet(10)
    py.set_state_dict(cpp.state_dict())
    opt_cpp = crew.optimizer.Adam(learning_rate=0.001, parameters=[p for _, p in cpp.named_parameters()])
    opt_py = crew.optimizer.Adam(learning_rate=0.001, parameters=py.parameters())
    for step in range(4):
        x, y = batch(step)
        losses = []
        for model, opt in ((cpp, opt_cpp), (py, opt_py)):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], abs=1e-6), step
    for (name, a), b in zip(cpp.named_parameters(), py.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, err_msg=name)


def test_training_lowers_the_loss_and_eval_mode_propagates():
    model = crew.nn.Sequential(crew.nn.Flatten(), crew.nn.Linear(784, 32), crew.nn.ReLU(),
                               crew.nn.Dropout(0.1), crew.nn.Linear(32, 10))
    opt = crew.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    x, y = batch(7, n=16)
    first = None
    for _ in range(30):
        loss = F.cross_entropy(model(x), y)
        first = first if first is not None else loss.item()
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert loss.item() < first * 0.5
    model.eval()
    assert not model.training and not model[3].training and not model[3]._impl.training
    model.train()
    assert model[3]._impl.training


def test_set_state_dict_checks_every_shape_before_copying():
    a, b = MyNet(10), MyNet(10)
    before = b.linear2.weight.numpy().copy()
    bad = dict(a.state_dict())
    bad["linear2.bias"] = crew.to_tensor(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"'linear2.bias' has shape \[3\] .* \[10\]"):
        b.set_state_dict(bad)
    np.testing.assert_array_equal(b.linear2.weight.numpy(), before)  # nothing copied
    with pytest.raises(ValueError, match="missing keys"):
        b.set_state_dict({})


def test_custom_parameters_and_errors():
    class Scale(crew.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([3], default_initializer=lambda s: np.full(s, 2.0))

        def forward(self, x):
            return x * self.w

    m = Scale()
    out = crew.sum(m(crew.to_tensor(np.ones(3, np.float32))))
    out.backward()
    np.testing.assert_array_equal(m.w.grad.numpy(), [1, 1, 1])
    assert [n for n, _ in m.named_parameters()] == ["w"]

    class NoInit(crew.nn.Layer):
        def __init__(self):
            self.fc = crew.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        NoInit()
    with pytest.raises(ValueError, match="parameters is None"):
        crew.optimizer.Adam(learning_rate=0.1)
    with pytest.raises(ValueError):
        crew.nn.Linear(4, 2)(crew.to_tensor(np.ones((2, 3), np.float32)))


def test_save_and_load_round_trip_model_and_optimizer(tmp_path):
    model = MyNet(10)
    opt = crew.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    x, y = batch(3)
    F.cross_entropy(model(x), y).backward()
    opt.step()
    crew.save(model.state_dict(), str(tmp_path / "model.safetensors"))
    crew.save(opt.state_dict(), str(tmp_path / "opt.safetensors"))
    other = MyNet(10)
    other.set_state_dict(crew.load(str(tmp_path / "model.safetensors")))
    for (n, a), b in zip(model.named_parameters(), other.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    opt2 = crew.optimizer.Adam(learning_rate=0.001, parameters=other.parameters())
    opt2.set_state_dict(crew.load(str(tmp_path / "opt.safetensors")))
    assert set(opt2.state_dict()) == set(opt.state_dict())
    crew.save({"a": 1}, str(tmp_path / "plain.safetensors"))  # plain values too, as Paddle
    assert crew.load(str(tmp_path / "plain.safetensors")) == {"a": 1}
    with pytest.raises(TypeError, match=r"save: the value at obj\['a'\] is a object"):
        crew.save({"a": object()}, str(tmp_path / "bad.safetensors"))
    with pytest.raises(OSError):
        crew.load(str(tmp_path / "missing.safetensors"))


def test_load_of_a_fifo_or_a_directory_is_a_value_error_at_once(tmp_path):
    # Opening a FIFO used to wait for a writer before any check: crew.load hung forever.
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
        crew.load(str(fifo))
    with pytest.raises(ValueError, match="is a directory, not a regular file"):
        crew.load(str(tmp_path))
