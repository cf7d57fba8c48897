"""crew.nn.SyncBatchNorm: conversion, one process, and 2 spawned ranks against one process."""
import os

import numpy as np

import crew
import crew.distributed as dist
from crew import nn

BATCH = 8


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(2, 3, 3, padding=1)
        self.body = nn.Sequential(nn.BatchNorm2D(3), nn.ReLU())
        rng = np.random.default_rng(3)  # the same weights in every process
        for p in self.conv.parameters():
            np.copyto(p.numpy(), rng.uniform(-0.5, 0.5, p.shape).astype(np.float32))

    def forward(self, x):
        return self.body(self.conv(x))


def _data():
    rng = np.random.default_rng(7)
    return (rng.uniform(-1, 2, (BATCH, 2, 4, 4)).astype(np.float32),
            rng.uniform(-1, 1, (BATCH, 3, 4, 4)).astype(np.float32))


def _step(rank, world):
    """One step (mean loss) of the converted net on this rank's rows, then eval."""
    x_all, r_all = _data()
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(Net())
    model = crew.DataParallel(net) if world > 1 else net
    x = crew.to_tensor(x_all[rows], stop_gradient=False)
    y = model(x)
    crew.mean(y * crew.to_tensor(r_all[rows])).backward()
    out = {"y": y.numpy().copy(), "x_grad": x.grad.numpy().copy()}
    for name, p in net.named_parameters():
        out[name + ".grad"] = p.grad.numpy().copy()
    for name, b in net.named_buffers():
        out[name] = b.numpy().copy()
    model.eval()
    out["eval_y"] = model(x).numpy().copy()
    return out


def two_rank_step(out_dir):
    dist.init_parallel_env()
    rank = dist.get_rank()
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **_step(rank, 2))


def test_convert_replaces_batch_norms_sharing_their_tensors():
    net = Net()
    net.eval()
    old = net.body[0]
    assert nn.SyncBatchNorm.convert_sync_batchnorm(net) is net
    new = net.body[0]
    assert isinstance(new, nn.SyncBatchNorm) and not isinstance(net.body[1], nn.SyncBatchNorm)
    assert crew._C.nn._is_synced_batch_norm(new._impl) and new._impl is old._impl
    assert not new.training
    assert list(net.state_dict()) == ["conv.weight", "conv.bias", "body.0.weight", "body.0.bias",
                                      "body.0._mean", "body.0._variance"]
    np.copyto(old.weight.numpy(), np.full([3], 2.0, np.float32))  # the same tensors
    assert net.state_dict()["body.0.weight"].numpy().tolist() == [2.0, 2.0, 2.0]
    bare = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2D(4))
    assert isinstance(bare, nn.SyncBatchNorm)


def test_one_process_is_batch_norm():
    x = crew.to_tensor(np.random.default_rng(1).uniform(-1, 1, (4, 3, 2, 2)).astype(np.float32))
    sync, plain = nn.SyncBatchNorm(3, momentum=0.8), nn.BatchNorm2D(3, momentum=0.8)
    assert list(sync.state_dict()) == ["weight", "bias", "_mean", "_variance"]
    # Equal up to float32 rounding: BatchNorm2D trains on oneDNN's kernels, SyncBatchNorm on
    # crew's double-precision loops even alone, so that 1 and N processes compute alike.
    np.testing.assert_allclose(sync(x).numpy(), plain(x).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sync._variance.numpy(), plain._variance.numpy(), rtol=1e-6, atol=1e-7)
    assert sync(crew.to_tensor(np.ones((5, 3), np.float32))).shape == [5, 3]  # [N, C] too


def test_two_ranks_of_four_equal_one_process_of_eight(tmp_path):
    dist.spawn(two_rank_step, args=(str(tmp_path),), nprocs=2)
    one = _step(0, 1)
    for rank in range(2):
        mine = np.load(tmp_path / f"rank{rank}.npz")
        rows = slice(rank * BATCH // 2, (rank + 1) * BATCH // 2)
        np.testing.assert_allclose(mine["y"], one["y"][rows], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mine["eval_y"], one["eval_y"][rows], rtol=1e-5, atol=1e-6)
        # The gradient of the sum of the two ranks' mean losses: twice the one-process one.
        np.testing.assert_allclose(mine["x_grad"], 2 * one["x_grad"][rows], rtol=1e-5, atol=1e-7)
        # (Not conv.bias.grad: batch norm cancels a per-channel shift, its gradient is noise.)
        for key in ("conv.weight.grad", "body.0.weight.grad", "body.0.bias.grad",
                    "body.0._mean", "body.0._variance"):
            np.testing.assert_allclose(mine[key], one[key], rtol=1e-5, atol=1e-7, err_msg=key)
