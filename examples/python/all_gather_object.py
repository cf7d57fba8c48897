# The seed's first program: python3 -m crew.distributed.launch --devices=0,1,2 all_gather_object.py
import crew as paddle
import crew.distributed as dist
dist.init_parallel_env()
object_list = []
if dist.get_rank() == 0:
    obj = {"foo": [1, 2, 3]}
else:
    obj = {"bar": [4, 5, 6]}
dist.all_gather_object(object_list, obj)
print(object_list)
