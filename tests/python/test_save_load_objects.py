"""paddle.save / paddle.load of what users save: nested dicts and lists of tensors, numbers and
strings, a lone Tensor, NumPy arrays; directories created; never pickle (issue 30, item 7)."""
import json

import numpy as np
import pytest

import crew as paddle
from crew import _C


def test_a_training_checkpoint_round_trips(tmp_path):
    paddle.seed(3)
    net = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    paddle.sum(net(paddle.to_tensor(np.ones((4, 3), np.float32)))).backward()
    opt.step()
    ckpt = {"model": net.state_dict(), "opt": opt.state_dict(), "epoch": 3, "best": 0.875,
            "tags": ["a", "b"], "shape": (2, 3), "note": None, "done": False,
            "curve": np.array([0.5, 0.25], np.float32), "inf": float("inf")}
    path = tmp_path / "new" / "dir" / "ckpt.pdparams"  # missing directories are made
    paddle.save(ckpt, str(path))
    back = paddle.load(str(path))
    assert back["epoch"] == 3 and back["best"] == 0.875 and back["tags"] == ["a", "b"]
    assert back["shape"] == (2, 3) and back["note"] is None and back["done"] is False
    assert back["inf"] == float("inf")
    np.testing.assert_array_equal(back["curve"], [0.5, 0.25])
    assert isinstance(back["curve"], np.ndarray)
    assert list(back["model"]) == list(net.state_dict())
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
    net2 = paddle.nn.Linear(3, 2)
    net2.set_state_dict(back["model"])
    opt2 = paddle.optimizer.Adam(parameters=net2.parameters())
    opt2.set_state_dict(back["opt"])
    np.testing.assert_array_equal(net2.weight.numpy(), net.weight.numpy())


def test_a_lone_tensor_and_plain_state_dicts(tmp_path):
    t = paddle.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    paddle.save(t, str(tmp_path / "t.pd"))
    back = paddle.load(str(tmp_path / "t.pd"))
    assert isinstance(back, paddle.Tensor) and back.shape == [2, 3]
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    sd = {"w": t}
    paddle.save(sd, str(tmp_path / "sd.pdparams"))
    assert "crew.object" not in _C.load_metadata(str(tmp_path / "sd.pdparams"))  # a plain safetensors file
    assert list(paddle.load(str(tmp_path / "sd.pdparams"))) == ["w"]


def test_the_structure_is_json_never_pickle(tmp_path):
    paddle.save({"epoch": 1, "w": paddle.to_tensor([1.0])}, str(tmp_path / "c.pd"))
    structure = json.loads(_C.load_metadata(str(tmp_path / "c.pd"))["crew.object"])
    assert structure == {"__dict__": [["epoch", 1], ["w", {"__tensor__": "t0", "numpy": False}]]}


def test_what_cannot_be_saved_is_named(tmp_path):
    with pytest.raises(TypeError, match=r"save: the value at obj\['f'\] is a function"):
        paddle.save({"f": lambda: 1}, str(tmp_path / "x.pd"))
    with pytest.raises(TypeError, match=r"save: key \(1, 2\) at obj is a tuple"):
        paddle.save({(1, 2): 3}, str(tmp_path / "y.pd"))
