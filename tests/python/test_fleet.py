"""paddle.distributed.fleet, the collective way: DistributedStrategy's checks, one process,
and a 2-rank job under crew.distributed.launch whose step equals one process on the whole
batch."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import crew as paddle
from crew.distributed import fleet

PROGRAM = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import crew as paddle
    from crew.distributed import fleet

    strategy = fleet.DistributedStrategy()
    strategy.fuse_grad_size_in_MB = 1
    strategy.hybrid_configs = {"dp_degree": 2}
    fleet.init(is_collective=True, strategy=strategy)
    rank, world = fleet.worker_index(), fleet.worker_num()
    paddle.seed(1)
    np.random.seed(1)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
    if rank == 1:  # DataParallel broadcasts rank 0's values
        for p in model.parameters():
            p.numpy()[...] = 0.0
    opt = fleet.distributed_optimizer(paddle.optimizer.SGD(0.1, parameters=model.parameters()))
    model = fleet.distributed_model(model)
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    y = np.arange(8, dtype=np.int64) % 3
    half = slice(4 * rank, 4 * rank + 4)
    loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(x[half])), paddle.to_tensor(y[half]))
    loss.backward()
    opt.step()
    opt.clear_grad()
    fleet.barrier_worker()
    with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
        json.dump({"world": world, "wrapped": type(model).__name__,
                   "state": {k: v.numpy().tolist() for k, v in model.state_dict().items()}}, f)
""")


def one_process_step(initial):
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
    model.set_state_dict({k: np.array(v, np.float32) for k, v in initial.items()})
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    y = np.arange(8, dtype=np.int64) % 3
    paddle.nn.functional.cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(y)).backward()
    opt.step()
    return model.state_dict()


def test_two_ranks_step_like_one_process_on_the_whole_batch(tmp_path):
    script = tmp_path / "quick_start.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_", "CREW_WORLD",
                                                                     "CREW_MASTER"))}
    r = subprocess.run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1", str(script),
                        str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + "".join(
        p.read_text() for p in (tmp_path / "log").glob("workerlog.*"))
    out = [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]
    assert [o["world"] for o in out] == [2, 2] and out[0]["wrapped"] == "DataParallel"
    for k in out[0]["state"]:
        np.testing.assert_array_equal(out[0]["state"][k], out[1]["state"][k])
    # Rank 0's initial values: rerun its seeding here and take one step over all 8 samples.
    paddle.seed(1)
    np.random.seed(1)
    init = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
    want = one_process_step({k: v.numpy() for k, v in init.state_dict().items()})
    for k, v in want.items():
        np.testing.assert_allclose(out[0]["state"][k], v.numpy(), rtol=1e-5, atol=1e-6)


def test_strategy_accepts_paddles_fields_and_rejects_what_crew_cannot_honour():
    s = fleet.DistributedStrategy()
    s.find_unused_parameters = True
    s.fuse_all_reduce_ops = True
    s.amp = False
    s.amp_configs = {"init_loss_scaling": 1024}
    s.check(2)
    s.recompute = True
    with pytest.raises(ValueError, match="recompute"):
        s.check(2)
    s = fleet.DistributedStrategy()
    s.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
    with pytest.raises(ValueError, match="mp_degree"):
        s.check(1)
    s.hybrid_configs = {"mp_degree": 1, "dp_degree": 4}
    with pytest.raises(ValueError, match="dp_degree=4"):
        s.check(2)
    with pytest.raises(AttributeError, match="no_such_field"):
        s.no_such_field = 1


def test_one_process_fleet_returns_the_model_and_the_optimizer():
    with pytest.raises(ValueError, match="collective"):
        fleet.init()
    with pytest.warns(UserWarning):
        fleet.init(is_collective=True)
    assert fleet.worker_index() == 0 and fleet.worker_num() == 1 and fleet.is_first_worker()
    model = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    assert fleet.distributed_model(model) is model
    assert fleet.distributed_optimizer(opt) is opt
    fleet.barrier_worker()
