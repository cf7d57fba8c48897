# The seed's spawn program: python3 spawn_all_gather.py [gpus] (every child prints).
import sys

import crew as paddle
import crew.distributed as dist


def all_gather(_obj):
    object_list = []
    dist.all_gather_object(object_list, _obj)
    return object_list


def train():
    dist.init_parallel_env()
    if dist.get_rank() == 0:
        obj = {"foo": [1, 2, 3]}
    else:
        obj = {"bar": [4, 5, 6]}
    object_list = all_gather(obj)
    print(object_list)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        dist.spawn(train, gpus=sys.argv[1])
    else:
        dist.spawn(train)
