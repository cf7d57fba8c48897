"""ParallelEnv: the job as the launcher's environment describes it (Paddle's names)."""
from .. import _C


class ParallelEnv:
    """Read from the environment when made (CREW_*, PADDLE_*, torchrun, Open MPI, Slurm)."""

    def __init__(self):
        e = _C.dist.parallel_env()
        self._env = e
        self.rank = e["rank"]
        self.world_size = e["world_size"]
        self.local_rank = e["local_rank"]
        self.device_id = e["device_id"]
        self.trainer_endpoints = list(e["trainer_endpoints"])
        ep = self.trainer_endpoints
        self.current_endpoint = ep[self.rank] if self.rank < len(ep) else e["master"]

    # Paddle's older names.
    @property
    def nranks(self):
        return self.world_size

    @property
    def local_world_size(self):
        return self._env["local_world_size"]

    @property
    def dev_id(self):
        return self.device_id

    @property
    def trainer_id(self):
        return self.rank

    def __repr__(self):
        return (f"ParallelEnv(rank={self.rank}, world_size={self.world_size}, "
                f"local_rank={self.local_rank}, device_id={self.device_id})")
