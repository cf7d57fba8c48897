#!/usr/bin/python3
"""LSTM forward + backward, crew (nn.LSTM on oneDNN) against PyTorch (torch.nn.LSTM), same
shapes, same weights, one thread each (issue 32's speed goal: crew at least 1.5x PyTorch
1.13's rate). Rounds alternate crew and torch; each round times ITERS steps of
y, (h, c) = lstm(x); sum(y * r).backward(). Prints both medians (sequences per second),
and crew / torch.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/rnn_vs_torch.py
    # options: --seq 50 --batch 32 --input 128 --hidden 256 --layers 1 --bidirect
    #          --rounds 7 --iters 10 --threads 1
"""
import argparse
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--input", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--bidirect", action="store_true")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    # crew reads its thread count when its first kernel runs; torch when told.
    os.environ["CREW_NUM_THREADS"] = str(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import numpy as np
    import torch
    import crew

    torch.set_num_threads(a.threads)
    direction = "bidirect" if a.bidirect else "forward"
    dirs = 2 if a.bidirect else 1
    net = crew.nn.LSTM(a.input, a.hidden, a.layers, direction)
    tnet = torch.nn.LSTM(a.input, a.hidden, a.layers, batch_first=True, bidirectional=a.bidirect)
    with torch.no_grad():
        for name, p in tnet.named_parameters():
            p.copy_(torch.from_numpy(getattr(net, name).numpy()))
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (a.batch, a.seq, a.input)).astype(np.float32)
    r = rng.uniform(-1, 1, (a.batch, a.seq, dirs * a.hidden)).astype(np.float32)
    cx, cr = crew.to_tensor(x, stop_gradient=False), crew.to_tensor(r)
    tx, tr = torch.from_numpy(x).requires_grad_(), torch.from_numpy(r)

    def crew_step():
        y, _ = net(cx)
        crew.sum(y * cr).backward()
        for p in net.parameters():
            p.clear_grad()
        cx.clear_grad()

    def torch_step():
        y, _ = tnet(tx)
        (y * tr).sum().backward()
        tnet.zero_grad(set_to_none=True)
        tx.grad = None

    # Same result first: a benchmark of two different computations says nothing.
    y, _ = net(cx)
    ty, _ = tnet(tx)
    diff = float(np.abs(y.numpy() - ty.detach().numpy()).max())
    if diff > 1e-4:
        sys.exit(f"rnn_vs_torch: outputs differ by {diff}")

    def rate(step):
        step()  # warm-up: primitives, allocations
        start = time.perf_counter()
        for _ in range(a.iters):
            step()
        return a.iters * a.batch / (time.perf_counter() - start)

    crew_rates, torch_rates = [], []
    for i in range(a.rounds):
        order = (crew_step, torch_step) if i % 2 == 0 else (torch_step, crew_step)
        for step in order:
            (crew_rates if step is crew_step else torch_rates).append(rate(step))
    c, t = statistics.median(crew_rates), statistics.median(torch_rates)
    print(f"LSTM seq={a.seq} batch={a.batch} input={a.input} hidden={a.hidden} layers={a.layers} "
          f"{direction} threads={a.threads}, forward+backward, median of {a.rounds} rounds x {a.iters} steps")
    print(f"crew  {c:10.1f} sequences/s")
    print(f"torch {t:10.1f} sequences/s  (torch {torch.__version__})")
    print(f"crew / torch = {c / t:.2f}")


if __name__ == "__main__":
    main()
