"""Functions the spawn tests start in child processes (spawn needs them importable)."""
import json
import os
import time

import numpy as np

import crew
import crew.distributed as dist


def sum_ranks(out_dir):
    dist.init_parallel_env()
    t = crew.to_tensor(np.full([3], float(dist.get_rank() + 1), dtype=np.float32))
    dist.all_reduce(t)
    gathered = []
    dist.all_gather(gathered, t)
    objs = [None]
    if dist.get_rank() == 0:
        objs = [{"from": 0, "t": (1, 2)}]
    dist.broadcast_object_list(objs, src=0)
    with open(os.path.join(out_dir, f"rank{dist.get_rank()}"), "w") as f:
        f.write(f"{t.numpy().tolist()} {len(gathered)} {objs[0]} {dist.get_world_size()}\n")


def reduce_scatter_and_gather(out_dir):
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    # Rank r contributes [r*10 + k] to rank k's slot; rank k gets sum_r (r*10 + k).
    parts = [crew.to_tensor(np.full([2], rank * 10.0 + k, dtype=np.float32)) for k in range(world)]
    mine = crew.zeros([2])
    dist.reduce_scatter(mine, parts)
    mx = crew.zeros([2])
    task = dist.reduce_scatter(mx, parts, op=dist.ReduceOp.MAX, sync_op=False)
    task.wait()
    gathered = []
    dist.gather(crew.to_tensor([float(rank), float(rank * rank)]), gathered, dst=1)
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        json.dump({"sum": mine.numpy().tolist(), "max": mx.numpy().tolist(),
                   "gathered": [g.numpy().tolist() for g in gathered]}, f)


def write_job_token(out_dir):
    rank = os.environ["CREW_RANK"]
    with open(os.path.join(out_dir, f"token{rank}"), "w") as f:
        f.write(os.environ.get("CREW_JOB_TOKEN", ""))


def write_environment(out_dir):
    with open(os.path.join(out_dir, f"env{os.environ['CREW_RANK']}.json"), "w") as f:
        json.dump(dict(os.environ), f)


def run_cpp_program(out_dir, program):
    """Runs a crew C++ program (which links crew's spawn start-up hook) from a spawn child."""
    import subprocess
    r = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60)
    with open(os.path.join(out_dir, f"rc{os.environ['CREW_RANK']}"), "w") as f:
        f.write(f"{r.returncode}\n{r.stderr}")


def rank1_raises_rank0_sleeps(pid_dir):
    rank = int(os.environ["CREW_RANK"])
    with open(os.path.join(pid_dir, f"pid{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("bad value 42 on rank 1")
    time.sleep(60)


def data_parallel_grads(out_dir):
    """Rank r feeds r + 1: after backward every rank holds the average gradient; under
    no_sync the local one."""
    dist.init_parallel_env()
    rank = dist.get_rank()

    class Net(crew.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = crew.nn.Linear(3, 2)
            self.scale = self.create_parameter([2])

        def forward(self, x):
            return self.fc(x) * self.scale

    net = Net()
    np.copyto(net.scale.numpy(), np.array([1.0, 2.0], np.float32) * (rank + 1))  # rank 0's wins
    model = crew.DataParallel(net, comm_buffer_size=1)
    x = crew.to_tensor(np.full([4, 3], float(rank + 1), np.float32))
    crew.sum(model(x)).backward()
    synced = net.fc.weight.grad.numpy().copy()
    for p in net.parameters():
        p.clear_grad()
    with model.no_sync():
        crew.sum(model(x)).backward()
    local = net.fc.weight.grad.numpy().copy()
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        json.dump({"scale": net.scale.numpy().tolist(), "synced": synced.tolist(),
                   "local": local.tolist(), "keys": sorted(model.state_dict())}, f)


def data_parallel_unused(out_dir):
    """find_unused_parameters through the engine (crew._C._GradSync): without it the first
    forward names the unused parameter; with it the used gradients are averaged and the unused
    one is zero on every rank."""
    dist.init_parallel_env()
    rank = dist.get_rank()

    class Net(crew.nn.Layer):
        def __init__(self):
            super().__init__()
            self.used = crew.nn.Linear(3, 2)
            self.unused = crew.nn.Linear(2, 2)

        def forward(self, x):
            return self.used(x)

    net = Net()
    x = crew.to_tensor(np.full([4, 3], float(rank + 1), np.float32))
    error = ""
    try:
        crew.DataParallel(net)(x)
    except RuntimeError as e:
        error = str(e)
    model = crew.DataParallel(net, find_unused_parameters=True)
    for _ in range(2):  # the second step adds into the bucket views clear_grad() kept
        crew.sum(model(x)).backward()
        used, unused = net.used.weight.grad.numpy().copy(), net.unused.weight.grad.numpy().copy()
        net.clear_gradients()
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        json.dump({"error": error, "used": used.tolist(), "unused": unused.tolist(),
                   "engine": type(model._sync).__name__, "steps": model._sync.steps}, f)


def amp_one_rank_inf(out_dir):
    """Rank 1's gradient holds an inf, rank 0's does not: both GradScalers must skip the step
    and lower the scale (the found-inf flag is all-reduced)."""
    dist.init_parallel_env()
    w = crew.to_tensor(np.ones([4], dtype=np.float32), stop_gradient=False)
    opt = crew.optimizer.SGD(learning_rate=0.1, parameters=[w])
    scaler = crew.amp.GradScaler(init_loss_scaling=8.0, decr_every_n_nan_or_inf=1)
    records = []
    for step in range(2):
        loss = crew.sum(w * 2.0)
        scaler.scale(loss).backward()
        if step == 0 and dist.get_rank() == 1:
            w.grad.numpy()[2] = np.inf  # numpy() shares the gradient's memory
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        records.append((scaler.get_loss_scaling(), w.numpy().tolist()))
    with open(os.path.join(out_dir, f"rank{dist.get_rank()}.json"), "w") as f:
        json.dump(records, f)


def amp_o2_comm_dtype(out_dir):
    """O2 under DataParallel (bfloat16 parameters and gradients, averaged over the ranks), and
    comm_dtype='bfloat16' for a float32 model against the plain float32 all_reduce."""
    dist.init_parallel_env()
    rank = dist.get_rank()
    rng = np.random.default_rng(rank)
    x = crew.to_tensor(rng.random((4, 5)).astype(np.float32))
    y = crew.to_tensor(rng.integers(0, 3, (4,)).astype(np.int64))

    def net():
        crew.seed(3)
        return crew.nn.Sequential(crew.nn.Linear(5, 8), crew.nn.ReLU(), crew.nn.Linear(8, 3))

    o2 = net()
    opt = crew.optimizer.Adam(learning_rate=0.01, parameters=o2.parameters())
    o2, opt = crew.amp.decorate(o2, opt, level="O2", dtype="bfloat16")
    model = crew.DataParallel(o2)
    for _ in range(3):
        with crew.amp.auto_cast(dtype="bfloat16", level="O2"):
            loss = crew.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grad_dtypes = [str(p.grad.dtype) for p in o2.parameters()]
        opt.step()
        opt.clear_grad()
    grads = {}
    for comm in (None, "bfloat16"):
        m = net()
        dp = crew.DataParallel(m, comm_dtype=comm)
        crew.nn.functional.cross_entropy(dp(x), y).backward()
        grads[str(comm)] = [p.grad.numpy().tolist() for p in m.parameters()]
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"params": [p.astype("float32").numpy().tolist() for p in o2.parameters()],
                   "grad_dtypes": grad_dtypes, "grads": grads}, f)


def amp_data_parallel(out_dir):
    """O1 autocast under DataParallel: bfloat16 linear layers, float32 gradients averaged over
    the ranks, the same parameters on both after a few steps with a GradScaler."""
    dist.init_parallel_env()
    rank = dist.get_rank()
    crew.seed(3)
    net = crew.nn.Sequential(crew.nn.Linear(5, 8), crew.nn.ReLU(), crew.nn.Linear(8, 3))
    model = crew.DataParallel(net)
    opt = crew.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    scaler = crew.amp.GradScaler(init_loss_scaling=256)
    rng = np.random.default_rng(rank)
    dtypes = []
    for _ in range(3):
        x = crew.to_tensor(rng.random((4, 5)).astype(np.float32))
        y = crew.to_tensor(rng.integers(0, 3, (4,)).astype(np.int64))
        with crew.amp.auto_cast(dtype="bfloat16"):
            logits = model(x)
            loss = crew.nn.functional.cross_entropy(logits, y)
        dtypes.append([str(logits.dtype), str(loss.dtype)])
        scaler.scale(loss).backward()
        dtypes.append([str(p.grad.dtype) for p in net.parameters()])
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"params": [p.numpy().tolist() for p in net.parameters()], "dtypes": dtypes,
                   "scale": scaler.get_loss_scaling()}, f)


def wait_for_async(out_dir):
    """all_reduce and isend/irecv with sync_op=False, then dist.wait on their tensors."""
    dist.init_parallel_env()
    rank = dist.get_rank()
    t = crew.to_tensor(np.full([4], float(rank + 1), dtype=np.float32))
    dist.all_reduce(t, sync_op=False)
    dist.wait(t)
    msg = crew.to_tensor(np.full([2], 7.0 if rank == 0 else 0.0, dtype=np.float32))
    if rank == 0:
        dist.isend(msg, dst=1)
    else:
        dist.irecv(msg, src=0)
    dist.wait(msg)
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        f.write(f"{t.numpy().tolist()} {msg.numpy().tolist()}\n")
