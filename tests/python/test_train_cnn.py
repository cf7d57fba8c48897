"""The seed's training program in Python (examples/python/train_cnn.py) and crew.DataParallel:
same losses as bin/train_cnn from the same weights, on one and two ranks."""
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import crew
import crew.distributed as dist

import dist_programs

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "python" / "train_cnn.py"
BIN = pathlib.Path(os.environ.get("CREW_BIN_DIR", ROOT / "build" / "release" / "bin"))
FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")
needs_data = pytest.mark.skipif(not FASHION.exists(), reason="dataset-fashion-mnist is not installed")


def clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CREW_RANK", "PADDLE_", "CREW_WORLD", "CREW_MASTER"))}
    for k in ("CREW_DATA_DIR", "CREW_CIFAR10"):  # Fashion-MNIST from its Debian path
        env.pop(k, None)
    env["HOME"] = str(tmp_path)  # no Paddle cache
    return env


def run(cmd, tmp_path, timeout=240):
    return subprocess.run(cmd, cwd=tmp_path, env=clean_env(tmp_path), capture_output=True, text=True,
                          timeout=timeout)


def launch(nranks):
    devices = ",".join(str(i) for i in range(nranks))
    return {1: [], 2: ["-m", "crew.distributed.launch", f"--devices={devices}"]}[nranks]


@needs_data
@pytest.mark.parametrize("nranks", [1, 2])
def test_python_losses_equal_train_cnns_from_the_same_weights(tmp_path, nranks):
    init = tmp_path / "init.safetensors"
    crew.save(crew._C.nn.MyNet(10, 1, 28).state_dict(), str(init))
    steps = 12
    py = run([sys.executable] + launch(nranks) + [str(SCRIPT), "--init", str(init), "--max-steps", str(steps),
              "--num-workers", "2", "--losses", str(tmp_path / "py.txt")], tmp_path)
    assert py.returncode == 0, py.stderr
    cpp_cmd = [str(BIN / "train_cnn"), "--init", str(init), "--epochs", "1", "--max-steps", str(steps),
               "--test-samples", "50", "--num-workers", "2", "--metrics", str(tmp_path / "cpp.jsonl")]
    if nranks > 1:
        cpp_cmd = [str(BIN / "crew"), "launch", f"--devices={','.join(map(str, range(nranks)))}",
                   "--log_dir", str(tmp_path / "cpplog")] + cpp_cmd
    cpp = run(cpp_cmd, tmp_path)
    assert cpp.returncode == 0, cpp.stderr
    py_losses = [float(v) for v in (tmp_path / "py.txt").read_text().split()]
    cpp_losses = [json.loads(line)["loss"] for line in (tmp_path / "cpp.jsonl").read_text().splitlines()
                  if '"type": "step"' in line]
    assert len(py_losses) == len(cpp_losses) == steps
    for step, (a, b) in enumerate(zip(py_losses, cpp_losses)):
        assert abs(a - b) <= 1e-6, (step, a, b)
    assert py_losses[-1] < py_losses[0]  # it learns


@needs_data
def test_the_seeds_program_prints_the_seeds_lines_under_launch(tmp_path):
    r = run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1", str(SCRIPT), "--epochs", "2",
             "--max-steps", "40", "--num-workers", "4"], tmp_path)
    assert r.returncode == 0, r.stderr
    # rank 0's stdout and stderr (tqdm's bar) are streamed together, as the seed's log shows
    assert re.search(r"epoch: 0, batch_id: 0, loss is: \[\d\.\d+\]\n", r.stdout), r.stdout
    lines = r.stdout.splitlines()
    assert any(l.startswith("epoch 0: ") and l.endswith(" images/s") for l in lines), r.stdout
    accuracy = float(re.search(r"test accuracy: (0\.\d+)", r.stdout).group(1))
    assert accuracy > 0.3  # 40 steps of 2 x 32 images: well above chance (0.1)
    log0 = (tmp_path / "log" / "workerlog.0").read_text()
    assert "it/s]" in log0 or "s/it]" in log0  # tqdm's bar over the epochs
    assert "loss is: [" in (tmp_path / "log" / "workerlog.1").read_text()  # rank 1 trained too


@needs_data
def test_model_fit_trains_mynet_on_two_ranks_under_launch(tmp_path):
    # examples/python/fit_cnn.py: paddle.Model.fit shards and wraps by itself under launch
    r = run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1",
             str(SCRIPT.parent / "fit_cnn.py"), "--epochs", "1", "--num-iters", "40"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^epoch 0: \d+ images/s$", r.stdout, re.M), r.stdout
    accuracy = float(re.search(r"test accuracy: (0\.\d+)", r.stdout).group(1))
    assert accuracy > 0.3  # 40 steps of 2 x 32 images: well above chance (0.1)
    assert "Epoch" not in r.stdout  # verbose=0: no progress lines


def test_data_parallel_averages_python_layer_grads_and_no_sync_keeps_them_local(tmp_path):
    dist.spawn(dist_programs.data_parallel_grads, args=(str(tmp_path),), nprocs=2)
    for r in range(2):
        got = json.loads((tmp_path / f"rank{r}").read_text())
        assert got["scale"] == [1.0, 2.0]  # rank 0's, broadcast at construction
        # fc.weight [3, 2]; d sum / d W[k][j] = scale[j] * sum of x over 4 rows, x = rank + 1:
        # averaged over the ranks 4 * 1.5 * scale[j]; under no_sync the local 4 * (r + 1) * scale[j]
        assert got["synced"] == [[6.0, 12.0]] * 3
        s = 4.0 * (r + 1)
        assert got["local"] == [[s, 2 * s]] * 3
        assert got["keys"] == ["fc.bias", "fc.weight", "scale"]  # no wrapper prefix


def test_data_parallel_find_unused_parameters_through_the_engine(tmp_path):
    dist.spawn(dist_programs.data_parallel_unused, args=(str(tmp_path),), nprocs=2)
    for r in range(2):
        got = json.loads((tmp_path / f"rank{r}").read_text())
        assert "unused.weight" in got["error"] and "find_unused_parameters" in got["error"], got["error"]
        # used.weight [3, 2]: d sum / d W[k][j] = sum of x over 4 rows, averaged: 4 * 1.5
        assert got["used"] == [[6.0, 6.0]] * 3
        assert got["unused"] == [[0.0, 0.0]] * 2
        assert got["engine"] == "_GradSync" and got["steps"] == 2


def test_data_parallel_wraps_the_engine_not_a_layer():
    # No fake C++ Layer behind the Python DataParallel: the engine alone, which in a world of
    # one process has no reducer and leaves the layer's gradients local.
    assert not hasattr(crew._C, "_DataParallel")
    net = crew.nn.Linear(3, 2)
    model = crew.DataParallel(net)
    assert isinstance(model._sync, crew._C._GradSync)
    assert model._sync.world_size == 1 and not model._sync.has_reducer
    with model.no_sync():
        assert model._sync.grad_need_sync is False
    assert model._sync.grad_need_sync is True
    crew.sum(model(crew.to_tensor(np.ones([2, 3], np.float32)))).backward()
    assert net.weight.grad.numpy().tolist() == [[2.0, 2.0]] * 3
