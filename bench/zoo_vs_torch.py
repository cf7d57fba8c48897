#!/usr/bin/python3
"""Model-zoo training steps, crew (crew.vision.models) against PyTorch (torchvision.models),
same architecture, batch and image size, one thread each (issue 32's speed goal: resnet50
1 rank x 1 thread at least 1.5x PyTorch 1.13's rate). Each step is forward, cross-entropy,
backward and a Momentum/SGD update. Rounds alternate crew and torch (crew first in odd
rounds); prints every round, both medians (images per second) and crew / torch.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/zoo_vs_torch.py
    # options: --models resnet50 mobilenet_v2 --batch 32 --size 32 --rounds 5 --iters 5
    #          --threads 1
Needs Debian's python3-torch and python3-torchvision (the product never does).
"""
import argparse
import contextlib
import os
import statistics
import time


def crew_step_fn(crew, name, batch, size, amp_level=None):
    """A training step of crew.vision.models.<name>; amp_level "O1" or "O2": in bfloat16 under
    paddle.amp.auto_cast (O2 also through paddle.amp.decorate)."""
    import numpy as np
    crew.seed(0)
    model = getattr(crew.vision.models, name)(num_classes=10)
    model.train()
    opt = crew.optimizer.Momentum(learning_rate=0.01, momentum=0.9, parameters=model.parameters())
    if amp_level == "O2":
        model, opt = crew.amp.decorate(models=model, optimizers=opt, level="O2", dtype="bfloat16")
    rng = np.random.default_rng(0)
    x = crew.to_tensor(rng.standard_normal((batch, 3, size, size)).astype("float32"))
    y = crew.to_tensor(rng.integers(0, 10, (batch, 1)).astype("int64"))
    loss_fn = crew.nn.CrossEntropyLoss()

    def step():
        with (crew.amp.auto_cast(level=amp_level, dtype="bfloat16") if amp_level else contextlib.nullcontext()):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss.item()
    return step


def torch_step_fn(torch, name, batch, size, autocast=False):
    """A training step of torchvision.models.<name>; autocast: under torch.autocast("cpu",
    dtype=torch.bfloat16)."""
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(num_classes=10)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 3, size, size, generator=g)
    y = torch.randint(0, 10, (batch,), generator=g)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def rate(step, iters, batch, warmup=3):
    """Images per second over `iters` steps after `warmup` untimed ones. Both libraries' first
    steps are slow (crew's resnet50: 870, 440, 240, then ~193 ms; PyTorch's: 960, 380, then
    ~335 ms): primitives created, the heap and the optimizer state first touched. Three
    warm-up steps leave the steady state a long training run sees."""
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(iters):
        step()
    return iters * batch / (time.perf_counter() - start)


def bench_setup(description, models, iters):
    """Parses the options both model benchmarks take, sets one thread count for crew and torch
    before importing them, prints the configuration; returns (args, torch, crew)."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=models)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=iters)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    os.environ["CREW_NUM_THREADS"] = str(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import torch
    import crew
    torch.set_num_threads(a.threads)
    print(f"batch={a.batch} image=3x{a.size}x{a.size} threads={a.threads}, forward+backward+momentum, "
          f"{a.rounds} rounds x {a.iters} steps (torch {torch.__version__})")
    return a, torch, crew


def main():
    a, torch, crew = bench_setup(__doc__, ["resnet50", "mobilenet_v2"], 5)
    print("| model | crew images/s | torch images/s | crew / torch |")
    print("| --- | ---: | ---: | ---: |")
    for name in a.models:
        steps = {"crew": crew_step_fn(crew, name, a.batch, a.size),
                 "torch": torch_step_fn(torch, name, a.batch, a.size)}
        runs = {"crew": [], "torch": []}
        for r in range(a.rounds):
            order = ["crew", "torch"] if r % 2 == 0 else ["torch", "crew"]
            for who in order:
                runs[who].append(rate(steps[who], a.iters, a.batch))
        c, t = statistics.median(runs["crew"]), statistics.median(runs["torch"])
        ratios = statistics.median(x / y for x, y in zip(runs["crew"], runs["torch"]))
        print(f"| {name} | {c:.1f} | {t:.1f} | {ratios:.2f}x |   "
              f"crew {' '.join(f'{v:.1f}' for v in runs['crew'])}; torch {' '.join(f'{v:.1f}' for v in runs['torch'])}")


if __name__ == "__main__":
    main()
