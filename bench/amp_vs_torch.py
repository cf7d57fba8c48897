#!/usr/bin/python3
"""Mixed-precision training steps (issue 31): crew's float32, bf16 O1 (paddle.amp.auto_cast) and
bf16 O2 (paddle.amp.decorate + auto_cast) against PyTorch 1.13's float32 and
torch.autocast("cpu", dtype=torch.bfloat16), same architecture (crew.vision.models /
torchvision.models), batch and image size, one thread each. Each step is forward,
cross-entropy, backward and a Momentum/SGD update. Rounds rotate the variants; prints every
round's images/s, each variant's median and the ratios the issue asks for (bf16 against crew's
own float32, crew's best bf16 against torch's autocast), medians of per-round ratios.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/amp_vs_torch.py
    # options: --models resnet18 --batch 32 --size 32 --rounds 5 --iters 3 --threads 1
Needs Debian's python3-torch and python3-torchvision (the product never does).
"""
import statistics

from zoo_vs_torch import bench_setup, crew_step_fn, rate, torch_step_fn


def ratio(runs, a, b):
    return statistics.median(x / y for x, y in zip(runs[a], runs[b]))


def main():
    a, torch, crew = bench_setup(__doc__, ["resnet18"], 3)
    variants = ["crew f32", "crew O1", "crew O2", "torch f32", "torch bf16"]
    print("| model | " + " | ".join(f"{v} img/s" for v in variants) +
          " | O1 / f32 | O2 / f32 | best crew bf16 / torch bf16 | crew f32 / torch f32 |")
    print("| --- |" + " ---: |" * (len(variants) + 4))
    for name in a.models:
        steps = {"crew f32": crew_step_fn(crew, name, a.batch, a.size),
                 "crew O1": crew_step_fn(crew, name, a.batch, a.size, "O1"),
                 "crew O2": crew_step_fn(crew, name, a.batch, a.size, "O2"),
                 "torch f32": torch_step_fn(torch, name, a.batch, a.size),
                 "torch bf16": torch_step_fn(torch, name, a.batch, a.size, autocast=True)}
        runs = {v: [] for v in variants}
        for r in range(a.rounds):
            for v in variants[r % len(variants):] + variants[:r % len(variants)]:
                runs[v].append(rate(steps[v], a.iters, a.batch))
        best = "crew O1" if statistics.median(runs["crew O1"]) >= statistics.median(runs["crew O2"]) else "crew O2"
        meds = " | ".join(f"{statistics.median(runs[v]):.1f}" for v in variants)
        print(f"| {name} | {meds} | {ratio(runs, 'crew O1', 'crew f32'):.2f}x | "
              f"{ratio(runs, 'crew O2', 'crew f32'):.2f}x | {ratio(runs, best, 'torch bf16'):.2f}x | "
              f"{ratio(runs, 'crew f32', 'torch f32'):.2f}x |")
        for v in variants:
            print(f"  {v}: " + " ".join(f"{x:.1f}" for x in runs[v]))


if __name__ == "__main__":
    main()
