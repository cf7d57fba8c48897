# The seed's mistake: a spawned train() that never calls init_parallel_env. The children's
# AssertionError ("Call paddle.distributed.init_parallel_env first ...") reaches the parent.
import crew as paddle
import crew.distributed as dist


def train():
    object_list = []
    dist.all_gather_object(object_list, {"rank": dist.get_rank()})
    print(object_list)


if __name__ == "__main__":
    dist.spawn(train, gpus='1,3')
