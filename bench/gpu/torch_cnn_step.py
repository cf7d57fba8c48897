#!/usr/bin/env python3
"""The seed's CNN (bench/torch_train_step.py's MyNet) trained on the GPU in PyTorch eager, as
crew's `train_cnn --device gpu` trains it: forward + cross entropy + backward + Adam, float32,
TF32 off unless --tf32. Prints images/s (median of --reps) and the peak GPU memory.

    python3 torch_cnn_step.py --batch 32 --steps 200 --reps 3
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train_step import MyNet  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--tf32", action="store_true")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    dev = torch.device("cuda")
    torch.manual_seed(0)
    net = MyNet(1, 28).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.rand(a.batch, 1, 28, 28, device=dev)
    y = torch.randint(0, 10, (a.batch,), device=dev)

    def step():
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    rates = []
    for _ in range(a.reps):
        t = time.perf_counter()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        rates.append(a.steps * a.batch / (time.perf_counter() - t))
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"torch {torch.__version__} {torch.cuda.get_device_name()}: MyNet batch {a.batch}, tf32 {a.tf32}: "
          f"{statistics.median(rates):.0f} images/s (median of {a.reps}), peak {peak:.1f} MiB")


if __name__ == "__main__":
    main()
