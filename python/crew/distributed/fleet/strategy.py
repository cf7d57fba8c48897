"""fleet.DistributedStrategy: Paddle's collective-training settings, checked against what
crew's data parallelism honours.

Every field of Paddle 2.4's strategy is accepted with Paddle's default. Those crew honours:
fuse_grad_size_in_MB and last_comm_group_size_MB (DataParallel's bucket sizes),
find_unused_parameters, sync_batch_norm (SyncBatchNorm.convert_sync_batchnorm in
distributed_model), fuse_all_reduce_ops, nccl_comm_num and hybrid_configs with
dp_degree only (every other degree 1). Switching on one that crew cannot honour (amp,
recompute, sharding, pipeline, tensor_parallel, gradient_merge, lamb, lars, dgc, localsgd,
a_sync, ...) raises ValueError naming it, from fleet.init/distributed_model: never ignored.
"""

# Fields crew honours, with Paddle's defaults.
_HONOURED = {
    "fuse_grad_size_in_MB": 32, "last_comm_group_size_MB": 1, "find_unused_parameters": False,
    "sync_batch_norm": False, "fuse_all_reduce_ops": True, "nccl_comm_num": 1,
    "without_graph_optimization": True, "sync_nccl_allreduce": True, "use_hierarchical_allreduce": False,
    "hierarchical_allreduce_inter_nranks": 1, "conv_workspace_size_limit": 512,
    "cudnn_exhaustive_search": False, "cudnn_batchnorm_spatial_persistent": False,
    "fuse_elewise_add_act_ops": False, "fuse_bn_act_ops": False, "fuse_relu_depthwise_conv": False,
    "enable_sequential_execution": False, "fuse_broadcast_ops": False, "enable_inplace": False,
    "enable_addto": False, "fix_op_run_order": False, "allow_cuda_graph_capture": False,
    "build_strategy": None, "execution_strategy": None, "auto": False, "semi_auto": False,
}
# Switches crew does not implement: accepted while False, an error once set.
_UNSUPPORTED = ("amp", "recompute", "sharding", "pipeline", "tensor_parallel", "gradient_merge", "lamb",
                "lars", "dgc", "localsgd", "adaptive_localsgd", "a_sync", "fp16_allreduce", "asp",
                "qat", "heter_ccl_mode", "is_fl_ps_mode", "with_coordinator", "elastic")
_HYBRID_DEFAULTS = {"dp_degree": -1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1}


class DistributedStrategy:
    def __init__(self):
        for key, value in _HONOURED.items():
            object.__setattr__(self, key, value)
        for key in _UNSUPPORTED:
            object.__setattr__(self, key, False)
            object.__setattr__(self, key + "_configs", {})
        object.__setattr__(self, "_hybrid", dict(_HYBRID_DEFAULTS))
        object.__setattr__(self, "a_sync_configs", {})

    @property
    def hybrid_configs(self):
        return dict(self._hybrid)

    @hybrid_configs.setter
    def hybrid_configs(self, configs):
        unknown = set(configs) - set(_HYBRID_DEFAULTS) - {"mp_configs", "pp_configs", "order"}
        if unknown:
            raise ValueError(f"DistributedStrategy.hybrid_configs: unknown keys {sorted(unknown)}")
        self._hybrid.update({k: v for k, v in configs.items() if k in _HYBRID_DEFAULTS})

    def __setattr__(self, name, value):
        if name not in _HONOURED and name not in _UNSUPPORTED and not name.endswith("_configs") \
                and name != "hybrid_configs":
            raise AttributeError(f"DistributedStrategy has no field '{name}'")
        object.__setattr__(self, name, value)

    def check(self, world_size):
        """Raises ValueError for a field crew cannot honour (called by fleet.init)."""
        on = [k for k in _UNSUPPORTED if getattr(self, k)]
        if on:
            raise ValueError(f"fleet: DistributedStrategy sets {', '.join(on)}; crew's fleet runs data "
                             "parallelism only (DataParallel), so these cannot be honoured")
        other = {k: v for k, v in self._hybrid.items() if k != "dp_degree" and v != 1}
        if other:
            raise ValueError(f"fleet: hybrid_configs {other}: crew runs data parallelism only "
                             "(mp_degree, pp_degree and sharding_degree must be 1)")
        dp = self._hybrid["dp_degree"]
        if dp not in (-1, world_size):
            raise ValueError(f"fleet: hybrid_configs dp_degree={dp} but the job has {world_size} ranks")

    def __repr__(self):
        fields = {k: getattr(self, k) for k in _HONOURED if getattr(self, k) != _HONOURED[k]}
        return f"DistributedStrategy({fields}, hybrid_configs={self._hybrid})"
