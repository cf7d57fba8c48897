"""Functions the spawn tests start in child processes (spawn needs them importable)."""
import os
import time

import numpy as np

import crew
import crew.distributed as dist


def sum_ranks(out_dir):
    dist.init_parallel_env()
    t = crew.to_tensor(np.full([3], float(dist.get_rank() + 1), dtype=np.float32))
    dist.all_reduce(t)
    gathered = []
    dist.all_gather(gathered, t)
    objs = [None]
    if dist.get_rank() == 0:
        objs = [{"from": 0, "t": (1, 2)}]
    dist.broadcast_object_list(objs, src=0)
    with open(os.path.join(out_dir, f"rank{dist.get_rank()}"), "w") as f:
        f.write(f"{t.numpy().tolist()} {len(gathered)} {objs[0]} {dist.get_world_size()}\n")


def rank1_raises_rank0_sleeps(pid_dir):
    rank = int(os.environ["CREW_RANK"])
    with open(os.path.join(pid_dir, f"pid{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("bad value 42 on rank 1")
    time.sleep(60)
