"""crew.distributed: Paddle's paddle.distributed over crew's C++ process groups.

    import crew.distributed as dist
    dist.init_parallel_env()
    out = []
    dist.all_gather_object(out, {"rank": dist.get_rank()})

Collectives release the GIL while they run. Plain objects (None, bool, int, float, str,
bytes, list, tuple, dict) travel in crew's typed encoding, so Python and C++ ranks exchange
them and nothing runs on the receiver. Other objects need pickle, which is off by default:
set_object_pickle(True) (or CREW_OBJECT_PICKLE=1) on every rank pickles them as Paddle does;
unpickling runs code the sender chose, so enable it only when every process is trusted.
"""
import functools as _functools
import warnings as _warnings

from .. import _C
from .parallel_env import ParallelEnv
from .spawn import spawn, MultiprocessContext

_d = _C.dist

Group = _d.Group
ReduceOp = _d.ReduceOp
Task = _d.Task

is_initialized = _d.is_initialized
get_rank = _d.get_rank
get_world_size = _d.get_world_size
get_group = _d.get_group
destroy_process_group = _d.destroy_process_group
barrier = _d.barrier
all_reduce = _d.all_reduce
reduce = _d.reduce
broadcast = _d.broadcast
all_gather = _d.all_gather
scatter = _d.scatter
alltoall = _d.alltoall
reduce_scatter = _d.reduce_scatter
gather = _d.gather
send = _d.send
recv = _d.recv
all_gather_object = _d.all_gather_object
broadcast_object_list = _d.broadcast_object_list
scatter_object_list = _d.scatter_object_list
set_object_pickle = _d.set_object_pickle
object_pickle_enabled = _d.object_pickle_enabled

_NOT_PARALLEL = ("Currently not a parallel execution environment, "
                 "`paddle.distributed.init_parallel_env` will not do anything.")


def init_parallel_env(backend="auto"):
    """Joins the job's store and builds the default group (Paddle's init_parallel_env).

    In a world of one process it warns (UserWarning, Paddle's text) and returns None; the
    collectives then act on a group of this one rank.
    """
    if ParallelEnv().world_size < 2:
        _warnings.warn(_NOT_PARALLEL, UserWarning, stacklevel=2)
        _d.init_parallel_env(backend, False)
        return None
    return _d.init_parallel_env(backend, True)


def new_group(ranks=None, backend=None, timeout=None):
    """A group of the given global ranks (every rank calls it, in the same order).
    Before init_parallel_env: Paddle's AssertionError (raised by crew._C)."""
    return _d.new_group(list(ranks or []), backend or "")


# Tasks of collectives started with sync_op=False that wait() has not waited for yet.
_pending = []


def _tracked(fn):
    """fn, remembering the Task it returns for an asynchronous call (sync_op=False)."""
    @_functools.wraps(fn)
    def call(*args, **kwargs):
        task = fn(*args, **kwargs)
        if isinstance(task, Task):
            _pending[:] = [t for t in _pending if not t.is_completed()]
            _pending.append(task)
        return task
    return call


all_reduce, reduce, broadcast, all_gather, scatter, alltoall, send, recv = (  # noqa: A001 (Paddle's names)
    _tracked(f) for f in (all_reduce, reduce, broadcast, all_gather, scatter, alltoall, send, recv))
reduce_scatter, gather = (_tracked(f) for f in (reduce_scatter, gather))


def wait(tensor, group=None, use_calc_stream=True):
    """Paddle's wait: returns once the communication on `tensor` is done. crew's synchronous
    collectives are done when they return, so this waits for every collective started with
    sync_op=False (isend, irecv, ...) that is still running: those on `tensor` among them."""
    while _pending:
        _pending.pop(0).wait()


def isend(tensor, dst, group=None):
    return send(tensor, dst, group, sync_op=False)


def irecv(tensor, src, group=None):
    return recv(tensor, src, group, sync_op=False)


def get_backend(group=None):
    g = group or get_group(0)
    return g.backend.upper() if g is not None else "GLOO"


from . import fleet  # noqa: E402

__all__ = [
    "fleet",
    "Group", "ReduceOp", "Task", "ParallelEnv", "spawn", "MultiprocessContext", "init_parallel_env",
    "is_initialized", "get_rank", "get_world_size", "new_group", "get_group", "destroy_process_group",
    "barrier", "all_reduce", "reduce", "broadcast", "all_gather", "scatter", "alltoall", "send", "recv",
    "reduce_scatter", "gather",
    "isend", "irecv", "all_gather_object", "broadcast_object_list", "scatter_object_list", "get_backend",
    "set_object_pickle", "object_pickle_enabled", "wait",
]
