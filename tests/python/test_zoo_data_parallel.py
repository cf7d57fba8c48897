"""paddle.vision.models' resnet50 and mobilenet_v2 on CIFAR-sized images (3x32x32, 4
classes), data-parallel on 2 ranks under crew.distributed.launch: the losses fall, and the
first step of 2 ranks x B/2 equals 1 process x B within 1e-5.

Batch norm: with per-rank batch statistics 2 x B/2 is not 1 x B (each rank normalises its
half by the half's mean and variance), so the program converts the nets with
nn.SyncBatchNorm.convert_sync_batchnorm, as a Paddle user does for that equality: the
statistics are those of the whole batch of both ranks, and one process normalises alike."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import crew as paddle
from crew import nn

BATCH, CLASSES, STEPS = 8, 4, 10
LR = {"resnet50": 0.002, "mobilenet_v2": 0.01}  # Momentum 0.9: the batch is fitted in STEPS

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import crew as paddle
    import crew.distributed as dist
    sys.path.insert(0, sys.argv[3])
    from test_zoo_data_parallel import build, data, train_step, BATCH, STEPS

    dist.init_parallel_env()
    rank = dist.get_rank()
    net, opt = build(sys.argv[2])
    model = paddle.DataParallel(net)
    x, y = data()
    half = slice(rank * BATCH // 2, (rank + 1) * BATCH // 2)
    losses = []
    grads = {}
    for step in range(STEPS):
        losses.append(train_step(model, opt, x[half], y[half], grads if step == 0 else None))
        if step == 0 and rank == 0:
            after = {k: v.numpy() for k, v in net.state_dict().items()}
            np.savez(f"{sys.argv[1]}/step1.npz", **after, **grads)
    np.save(f"{sys.argv[1]}/losses{rank}.npy", np.array(losses))
""")


def build(name):
    """The net (batch norms made SyncBatchNorm) from a fixed seed, and its optimizer.
    mobilenet_v2's classifier Dropout is put in eval mode: its masks, drawn per process, are
    not those of one process over the whole batch."""
    paddle.seed(21)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(getattr(paddle.vision.models, name)(num_classes=CLASSES))
    for layer in net.sublayers():
        if isinstance(layer, nn.Dropout):
            layer.eval()
    return net, paddle.optimizer.Momentum(learning_rate=LR[name], momentum=0.9, parameters=net.parameters())


def data():
    rng = np.random.default_rng(22)
    return (rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32),
            rng.integers(0, CLASSES, (BATCH,)).astype(np.int64))


def train_step(model, opt, x, y, grads=None):
    """One Momentum step on (x, y); its loss. The gradients go to `grads` ("name@GRAD") if given."""
    loss = nn.functional.cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(y))
    loss.backward()
    if grads is not None:
        grads.update({f"{k}@GRAD": p.grad.numpy().copy() for k, p in model.named_parameters()})
    opt.step()
    opt.clear_grad()
    return loss.item()


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2"])
def test_two_ranks_train_and_step_like_one_process(tmp_path, name):
    script = tmp_path / "cifar_dp.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_", "CREW_WORLD",
                                                                     "CREW_MASTER"))}
    env["CREW_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1", str(script),
                        str(tmp_path), name, os.path.dirname(os.path.abspath(__file__))],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150)
    assert r.returncode == 0, r.stderr + "".join(
        p.read_text() for p in (tmp_path / "log").glob("workerlog.*"))
    # Each rank's loss on its own half falls as the net fits the batch.
    losses = np.mean([np.load(tmp_path / f"losses{rank}.npy") for rank in range(2)], axis=0)
    assert np.mean(losses[-3:]) < 0.5 * losses[0], losses
    # One process, one step over all BATCH images, from the same start: the same averaged
    # gradients, the same weights and batch-norm statistics after it, within 1e-5 of each
    # tensor's scale (float32 sums over other splits of the batch: conv1's gradient, of
    # magnitude 50 after 50 layers, differs by 1e-4 in its last digits).
    net, opt = build(name)
    x, y = data()
    grads = {}
    train_step(net, opt, x, y, grads)
    got = np.load(tmp_path / "step1.npz")
    want = {**{k: v.numpy() for k, v in net.state_dict().items()}, **grads}
    assert sorted(got.files) == sorted(want)
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=0, atol=1e-5 * max(1.0, float(np.abs(v).max())), err_msg=k)
    assert max(float(np.abs(g).max()) for k, g in grads.items()) > 1e-2  # a real step
