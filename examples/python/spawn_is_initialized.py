# The seed's is_initialized program: python3 spawn_is_initialized.py [nprocs]
import sys

import crew as paddle
import crew.distributed as dist


def train(gpu_id):
    if gpu_id == dist.get_rank():
        print("ID:%s" % gpu_id, paddle.distributed.is_initialized())
    paddle.distributed.init_parallel_env()
    if gpu_id == dist.get_rank():
        print("ID:%s" % gpu_id, paddle.distributed.is_initialized())


if __name__ == "__main__":
    nprocs = int(sys.argv[1]) if len(sys.argv) > 1 else -1
    dist.spawn(train, args=(3,), nprocs=nprocs)
