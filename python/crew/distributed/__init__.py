"""crew.distributed: init_parallel_env, collectives, spawn, launch (Paddle's paddle.distributed)."""
