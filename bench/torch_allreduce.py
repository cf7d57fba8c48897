"""PyTorch's Gloo all_reduce (torch.distributed, backend "gloo") on 2 local processes: the
peer crew's Gloo backend is measured against (issue 19 part 2). For each size, the median
over RUNS runs of the slower rank's mean time per op, as bin/collectives_bench reports it.

    /usr/bin/python3 bench/torch_allreduce.py --sizes 4:64M --factor 4 --runs 5
"""
import argparse
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * mult[text[-1]] if text[-1] in mult else int(text)


def sizes_of(spec, factor):
    lo, hi = (parse_size(s) for s in spec.split(":"))
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= factor
    return out


def worker(rank, world, port, sizes, runs, run_bytes, max_iters, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    rows = []
    for size in sizes:
        t = torch.ones(max(1, size // 4), dtype=torch.float32)
        iters = max(1, min(max_iters, run_bytes // max(size, 1)))
        for _ in range(min(iters, 5)):
            dist.all_reduce(t)
        per_run = []
        for _ in range(runs):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            mine = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
            dist.all_reduce(mine, op=dist.ReduceOp.MAX)
            per_run.append(mine.item())
        rows.append((size, statistics.median(per_run)))
    if rank == 0:
        out.put(rows)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4:64M")
    p.add_argument("--factor", type=int, default=4)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--run-bytes", type=int, default=64 << 20)
    p.add_argument("--max-iters", type=int, default=200)
    a = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, 2, port, sizes_of(a.sizes, a.factor), a.runs, a.run_bytes,
                                              a.max_iters, q)) for r in range(2)]
    for pr in procs:
        pr.start()
    rows = q.get(timeout=1800)
    for pr in procs:
        pr.join(timeout=60)
    print(f"# torch {torch.__version__} gloo all_reduce float32, 2 ranks, median of {a.runs} runs")
    print("| size | time (us) | busbw (GB/s) |")
    print("| ---: | ---: | ---: |")
    for size, sec in rows:
        print(f"| {size} | {sec * 1e6:.1f} | {size / sec / 1e9:.3f} |")


if __name__ == "__main__":
    main()
