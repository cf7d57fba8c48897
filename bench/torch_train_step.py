#!/usr/bin/env python3
"""The seed's CNN (crew/nn/models/my_net.h) trained one step at a time in PyTorch, timed as
bin/train_step times crew's: forward + cross entropy + backward + Adam, batch 32, random
inputs. PyTorch is only the peer measured against; crew never needs it.

    /usr/bin/python3 bench/torch_train_step.py --threads 1 --steps 100 --reps 3 --inputs 1x28x28

Prints one line per thread count: images/s min / median / max over the repetitions.
"""
import argparse
import statistics
import time

import torch
from torch import nn


class MyNet(nn.Module):
    def __init__(self, in_channels, image_size, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 32, 3)
        self.pool1 = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.pool2 = nn.MaxPool2d(2, 2)
        self.conv3 = nn.Conv2d(64, 64, 3)
        s = ((image_size - 2) // 2 - 2) // 2 - 2
        self.linear1 = nn.Linear(64 * s * s, 64)
        self.linear2 = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.pool1(torch.relu(self.conv1(x)))
        x = self.pool2(torch.relu(self.conv2(x)))
        x = torch.relu(self.conv3(x))
        x = torch.flatten(x, 1)
        return self.linear2(torch.relu(self.linear1(x)))


def run(threads, args):
    torch.set_num_threads(threads)
    c, s = (int(v) for v in args.inputs.split("x")[:2])
    torch.manual_seed(0)
    net = MyNet(c, s)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(args.batch, c, s, s)
    y = torch.randint(0, 10, (args.batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    rates = []
    for _ in range(args.reps):
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        rates.append(args.steps * args.batch / (time.perf_counter() - start))
    print(f"torch {torch.__version__} {args.inputs} threads={threads} batch={args.batch} images/s "
          f"min {min(rates):7.0f} median {statistics.median(rates):7.0f} max {max(rates):7.0f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--inputs", default="1x28x28")
    args = p.parse_args()
    for t in args.threads:
        run(t, args)


if __name__ == "__main__":
    main()
