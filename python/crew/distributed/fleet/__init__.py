"""paddle.distributed.fleet, the collective way, on crew's DataParallel.

    from crew.distributed import fleet
    fleet.init(is_collective=True)                  # init_parallel_env()
    model = fleet.distributed_model(model)          # DataParallel(model) on several ranks
    opt = fleet.distributed_optimizer(opt)          # the optimizer (DataParallel all-reduces)

Run it under `python -m crew.distributed.launch --devices=0,1 train.py`. worker_index(),
worker_num(), is_first_worker(), barrier_worker() read and sync the default group. The
parameter-server mode (is_collective=False) is not supported: a ValueError says so.
"""
from .strategy import DistributedStrategy

_state = {"initialized": False, "strategy": None}


def _dist():
    from ... import distributed
    return distributed


def init(role_maker=None, is_collective=False, strategy=None, log_level="INFO"):
    """Joins the job (init_parallel_env) and keeps `strategy` for distributed_model."""
    if not is_collective and (role_maker is None or not getattr(role_maker, "_is_collective", False)):
        raise ValueError("fleet.init: crew supports collective training only; call "
                         "fleet.init(is_collective=True) (the parameter-server mode is not available)")
    strategy = strategy or DistributedStrategy()
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: strategy must be a fleet.DistributedStrategy, got {type(strategy).__name__}")
    dist = _dist()
    world = dist.ParallelEnv().world_size
    strategy.check(world)
    if not dist.is_initialized():
        dist.init_parallel_env()
    _state.update(initialized=True, strategy=strategy)


def _require(op):
    if not _state["initialized"]:
        raise RuntimeError(f"fleet.{op}: call fleet.init(is_collective=True) first")


def worker_index():
    return _dist().get_rank()


def worker_num():
    return _dist().get_world_size()


def is_first_worker():
    return worker_index() == 0


def local_rank():
    return _dist().ParallelEnv().local_rank


def worker_endpoints(to_string=False):
    eps = _dist().ParallelEnv().trainer_endpoints
    return ",".join(eps) if to_string else list(eps)


def barrier_worker():
    _require("barrier_worker")
    _dist().barrier()


def distributed_model(model):
    """The model wrapped in DataParallel with the strategy's bucket sizes (sync_batch_norm
    converts its BatchNorm2D layers first); in a job of one rank, the model itself."""
    _require("distributed_model")
    s = _state["strategy"]
    if s.sync_batch_norm:
        from ...nn import SyncBatchNorm
        model = SyncBatchNorm.convert_sync_batchnorm(model)
    if worker_num() <= 1:
        return model
    from ...parallel import DataParallel
    return DataParallel(model, comm_buffer_size=s.fuse_grad_size_in_MB,
                        last_comm_buffer_size=s.last_comm_group_size_MB,
                        find_unused_parameters=s.find_unused_parameters)


def distributed_optimizer(optimizer, strategy=None):
    """The optimizer itself: DataParallel all-reduces the gradients during backward, so the
    update needs nothing more. A strategy given here replaces fleet.init's (and is checked)."""
    _require("distributed_optimizer")
    if strategy is not None:
        strategy.check(worker_num())
        _state["strategy"] = strategy
    return optimizer


class UserDefinedRoleMaker:
    def __init__(self, is_collective=False, **kwargs):
        self._is_collective = is_collective


class PaddleCloudRoleMaker(UserDefinedRoleMaker):
    pass


__all__ = ["init", "DistributedStrategy", "distributed_model", "distributed_optimizer", "worker_index",
           "worker_num", "is_first_worker", "local_rank", "worker_endpoints", "barrier_worker",
           "UserDefinedRoleMaker", "PaddleCloudRoleMaker"]
