"""crew.distributed: the seed's programs (examples/python), spawn, launch, objects."""
import json
import os
import pathlib
import subprocess
import sys
import time
import warnings

import pytest

import crew
import crew.distributed as dist

import dist_programs

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
NO_INIT = ("AssertionError: Call paddle.distributed.init_parallel_env first to initialize "
           "the distributed environment.")
GATHERED3 = "[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]"


def run(args, cwd, timeout=120):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("CREW_RANK", "PADDLE_", "CREW_WORLD", "CREW_MASTER")):
            del env[k]
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("devices", ["0,1,2", "0,1,2,3"])
def test_launch_runs_the_seeds_all_gather_object(tmp_path, devices):
    r = run(["-m", "crew.distributed.launch", f"--devices={devices}",
             str(EXAMPLES / "all_gather_object.py")], tmp_path)
    assert r.returncode == 0, r.stderr
    n = len(devices.split(","))
    expected = "[{'foo': [1, 2, 3]}" + ", {'bar': [4, 5, 6]}" * (n - 1) + "]"
    assert r.stdout.strip().splitlines()[-1] == expected
    for i in range(n):  # every rank's log holds its own copy
        assert expected in (tmp_path / "log" / f"workerlog.{i}").read_text()


def test_launch_passes_on_the_scripts_exit_code(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys, os\nsys.exit(7 if os.environ['CREW_RANK'] == '1' else 0)\n")
    r = run(["-m", "crew.distributed.launch", "--devices=0,1", str(script)], tmp_path)
    assert r.returncode == 7, r.stderr
    assert "rank 1" in r.stderr or "Exit code 7" in r.stderr


def test_without_launch_init_warns_and_a_group_of_one_gathers(tmp_path):
    r = run([str(EXAMPLES / "all_gather_object.py")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert ("UserWarning: Currently not a parallel execution environment, "
            "`paddle.distributed.init_parallel_env` will not do anything.") in r.stderr
    assert r.stdout.strip() == "[{'foo': [1, 2, 3]}]"


def test_without_init_collectives_raise_paddles_assertion(tmp_path):
    script = tmp_path / "no_init.py"
    script.write_text("import crew.distributed as dist\nout = []\n"
                      "dist.all_gather_object(out, {'foo': [1, 2, 3]})\n")
    r = run([str(script)], tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == NO_INIT


def test_spawn_with_gpus_runs_one_child_per_listed_device(tmp_path):
    r = run([str(EXAMPLES / "spawn_all_gather.py"), "1,3"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}]"] * 2


def test_spawn_is_initialized_with_args(tmp_path):
    r = run([str(EXAMPLES / "spawn_is_initialized.py"), "4"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["ID:3 False", "ID:3 True"]


def test_spawn_without_init_raises_the_childs_assertion_in_the_parent(tmp_path):
    r = run([str(EXAMPLES / "spawn_without_init.py")], tmp_path)
    assert r.returncode == 1
    assert "ProcessRaisedException" in r.stderr
    assert "terminated with the following error" in r.stderr
    assert NO_INIT in r.stderr


def test_spawn_collectives_and_broadcast_object_list(tmp_path):
    dist.spawn(dist_programs.sum_ranks, args=(str(tmp_path),), nprocs=2)
    for rank in range(2):
        line = (tmp_path / f"rank{rank}").read_text().strip()
        assert line == "[3.0, 3.0, 3.0] 2 {'from': 0, 't': [1, 2]} 2"


def test_spawn_reduce_scatter_and_gather(tmp_path):
    dist.spawn(dist_programs.reduce_scatter_and_gather, args=(str(tmp_path),), nprocs=2)
    r0, r1 = (json.loads((tmp_path / f"rank{r}").read_text()) for r in range(2))
    assert r0["sum"] == [10.0, 10.0] and r1["sum"] == [12.0, 12.0]  # 0 + 10, 1 + 11
    assert r0["max"] == [10.0, 10.0] and r1["max"] == [11.0, 11.0]
    assert r0["gathered"] == [] and r1["gathered"] == [[0.0, 0.0], [1.0, 1.0]]  # on dst only


def test_spawn_gives_its_children_a_token_of_their_own(tmp_path, monkeypatch):
    # Rank 0's store admits only this spawn's children: a fresh token, not an enclosing job's.
    monkeypatch.setenv("CREW_JOB_TOKEN", "an-enclosing-jobs-secret")
    dist.spawn(dist_programs.write_job_token, args=(str(tmp_path),), nprocs=2)
    tokens = [(tmp_path / f"token{r}").read_text() for r in range(2)]
    assert tokens[0] == tokens[1]
    assert len(tokens[0]) == 32 and tokens[0] != "an-enclosing-jobs-secret"


def test_spawn_takes_its_childrens_environment_from_crews_one_owner(tmp_path, monkeypatch):
    # Python's spawn writes no variable of its own: each child's come from the C++ owner of a
    # worker's environment (crew/core/worker_env.h, also crew launch's and C++ spawn's) through
    # _C.dist.spawn_worker_env. Traced here, with a marker only the trace adds.
    import json
    owner = crew._C.dist.spawn_worker_env
    given = {}

    def traced(rank, devices, port, job_id, token):
        env = dict(owner(rank, devices, port, job_id, token))
        env["CREW_TEST_FROM_OWNER"] = str(rank)
        given[rank] = env
        return env

    monkeypatch.setattr(crew._C.dist, "spawn_worker_env", traced)
    # An enclosing launcher's: rank 0 hosts this spawn's store, so it must not reach the children.
    monkeypatch.setenv("CREW_STORE_HOSTED", "1")
    dist.spawn(dist_programs.write_environment, args=(str(tmp_path),), nprocs=2)
    assert sorted(given) == [0, 1]
    for rank, expected in given.items():
        got = json.loads((tmp_path / f"env{rank}.json").read_text())
        assert got["CREW_TEST_FROM_OWNER"] == str(rank)
        assert got["CREW_RANK"] == str(rank) and "CREW_STORE_HOSTED" not in got
        for name, value in expected.items():
            assert got.get(name) == (value or None), name


def test_a_crew_program_started_from_a_spawn_child_runs_as_itself(tmp_path):
    # Python's spawn set CREW_SPAWN_CHILD, the variable by which crew's C++ start-up hook knows
    # a child of C++ spawn: a crew program run from a Python child took itself for one and
    # exited 3.
    program = pathlib.Path(crew.__file__).resolve().parents[2] / "bin" / "spawn_is_initialized"
    if not program.exists():
        pytest.skip(f"{program} is not built")
    dist.spawn(dist_programs.run_cpp_program, args=(str(tmp_path), str(program)), nprocs=2)
    for rank in range(2):
        rc, _, err = (tmp_path / f"rc{rank}").read_text().partition("\n")
        assert rc == "0", err


def test_spawn_child_error_stops_the_others_and_names_the_rank(tmp_path):
    start = time.monotonic()
    with pytest.raises(dist.spawn.__globals__["ProcessRaisedException"]) as info:
        dist.spawn(dist_programs.rank1_raises_rank0_sleeps, args=(str(tmp_path),), nprocs=2)
    assert time.monotonic() - start < 50  # rank 0's 60 s sleep was cut short
    assert info.value.error_index == 1
    assert "ValueError: bad value 42 on rank 1" in str(info.value)
    pid0 = int((tmp_path / "pid0").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid0, 0)


def test_spawn_rejects_bad_device_lists():
    with pytest.raises(ValueError, match="'x' is not a device id"):
        dist.spawn(dist_programs.sum_ranks, gpus="0,x")
    with pytest.raises(ValueError, match=r"selected devices \(2\) is not equal .* processes \(3\)"):
        dist.spawn(dist_programs.sum_ranks, nprocs=3, gpus="0,1")


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


def test_objects_typed_and_pickled_round_trip_in_a_group_of_one():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.init_parallel_env() is None
    assert any("not a parallel execution environment" in str(w.message) for w in caught)
    assert not dist.is_initialized()
    assert not dist.object_pickle_enabled()
    plain = [None, True, -3, 1.5, "s\u00e9", b"\x00\x01", [1, [2.5, None]], {"a": {1: "b"}}]
    for obj in plain:  # no pickle needed
        out = ["stale"]
        dist.all_gather_object(out, obj)
        assert out == [obj], obj
    out = []
    dist.all_gather_object(out, (1, "two"))
    assert out == [[1, "two"]]  # a tuple travels as a list, as in the C++ API
    magic = b"\x00crew.pickle\x00payload"
    pickled = [2 ** 70, magic, {(1, 2): "tuple key"}, Point(4), {"p": Point(5)}]
    for obj in pickled:  # not plain: a TypeError naming the switch, the list untouched
        out = ["stale"]
        with pytest.raises(TypeError, match=r"all_gather_object: cannot send .*set_object_pickle\(True\)"):
            dist.all_gather_object(out, obj)
        assert out == ["stale"]
    dist.set_object_pickle(True)
    try:
        for obj in pickled:
            out = ["stale"]
            dist.all_gather_object(out, obj)
            assert out == [obj], obj
    finally:
        dist.set_object_pickle(False)


OBJECTS_SCRIPT = """
import os, sys
import crew.distributed as dist

class Point:
    def __init__(self, x):
        self.x = x

class Payload:  # what an attacker sends: unpickling it runs code on the receiver
    def __reduce__(self):
        code = "import os; open(os.path.join(%r, 'ran-on-' + os.environ['CREW_RANK']), 'w').close()"
        return (exec, (code % OUT,))

OUT = sys.argv[2]
mode = sys.argv[1]
dist.init_parallel_env()
rank = dist.get_rank()
if mode == "attack" and rank == 1:
    dist.set_object_pickle(True)  # the attacker's side pickles; rank 0 never enabled it
obj = {"rank": rank}
if rank == 1:
    obj = Payload() if mode == "attack" else Point(41)
out = []
try:
    dist.all_gather_object(out, obj)
    result = "ok " + repr([o if isinstance(o, dict) else o.x for o in out])
except Exception as e:
    result = type(e).__name__ + ": " + str(e)
with open(os.path.join(OUT, "rank%d" % rank), "w") as f:
    f.write(result)
"""


def run_objects_script(tmp_path, mode, env_extra=None):
    script = tmp_path / "objects.py"
    script.write_text(OBJECTS_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_", "CREW_OBJECT"))}
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1", str(script), mode,
                        str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [(tmp_path / f"rank{i}").read_text() for i in range(2)]


def test_a_pickled_payload_from_a_peer_does_not_run_without_the_switch(tmp_path):
    rank0, rank1 = run_objects_script(tmp_path, "attack")
    assert not (tmp_path / "ran-on-0").exists()
    assert rank0.startswith("ValueError: all_gather_object: rank 1 sent a pickled object and this rank "
                            "refuses to unpickle it"), rank0
    assert "set_object_pickle(True)" in rank0 and "CREW_OBJECT_PICKLE=1" in rank0
    assert (tmp_path / "ran-on-1").exists()  # the sender enabled pickle: its own copy did run


def test_a_non_plain_object_without_the_switch_fails_on_every_rank(tmp_path):
    rank0, rank1 = run_objects_script(tmp_path, "point")
    assert rank1.startswith("TypeError: all_gather_object: cannot send a value of type 'Point'"), rank1
    assert rank0.startswith("ValueError: all_gather_object: rank 1 could not send its object "
                            "(it holds 'Point'"), rank0


def test_with_the_switch_a_custom_class_round_trips(tmp_path):
    rank0, rank1 = run_objects_script(tmp_path, "point", {"CREW_OBJECT_PICKLE": "1"})
    assert rank0 == rank1 == "ok [{'rank': 0}, 41]"


def test_parallel_env_reads_paddles_variables(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks) == (1, 4, 4)
    assert dist.get_rank() == 1


def test_new_group_before_init_raises_paddles_assertion():
    with pytest.raises(AssertionError, match="Call paddle.distributed.init_parallel_env first"):
        dist.new_group([0])


def _path_with_a_wrong_python3(tmp_path):
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho wrong python3 >&2\nexit 42\n")
    (fake / "python3").chmod(0o755)
    return str(fake) + os.pathsep + os.environ.get("PATH", "")


def test_launch_runs_a_script_under_the_interpreter_that_started_it(tmp_path):
    script = tmp_path / "which.py"
    script.write_text("import sys\nprint('exe', sys.executable)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_"))}
    env.pop("CREW_PYTHON", None)
    env["PATH"] = _path_with_a_wrong_python3(tmp_path)
    r = subprocess.run([sys.executable, "-m", "crew.distributed.launch", "--devices=0", str(script)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"exe {sys.executable}" in r.stdout
    assert f"python: {sys.executable} (CREW_PYTHON" in r.stderr


def test_crew_launch_runs_a_script_under_the_interpreter_crew_was_built_for(tmp_path):
    crew_bin = pathlib.Path(os.environ["CREW_BIN_DIR"]) / "crew"
    script = tmp_path / "which.py"
    script.write_text("import sys\nprint('exe', sys.executable)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_RANK", "PADDLE_"))}
    env.pop("CREW_PYTHON", None)
    env["PATH"] = _path_with_a_wrong_python3(tmp_path)
    r = subprocess.run([str(crew_bin), "launch", "--devices=0", str(script)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "wrong python3" not in r.stderr
    assert "(the interpreter crew was built for)" in r.stderr
    assert "exe /" in r.stdout


PEER_DIES_SCRIPT = """
import os, sys, time
import numpy as np
import crew, crew.distributed as dist
out = sys.argv[1]
dist.init_parallel_env()
t = crew.to_tensor(np.ones([4], "float32"))
dist.all_reduce(t)
open(os.path.join(out, "ready%d" % dist.get_rank()), "w").close()
if dist.get_rank() == 1:
    time.sleep(120)
while not os.path.exists(os.path.join(out, "killed")):
    time.sleep(0.02)
try:
    dist.all_reduce(t)
except Exception as e:
    print("error:", type(e).__name__, e, flush=True)
    sys.exit(3)
"""


@pytest.mark.parametrize("backend", ["gloo", "shm"])
def test_without_a_launcher_the_survivor_exits_soon_after_its_peer_dies(tmp_path, backend):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = tmp_path / "peer_dies.py"
    script.write_text(PEER_DIES_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CREW_", "PADDLE_"))}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    env.update({"CREW_WORLD_SIZE": "2", "CREW_MASTER": f"127.0.0.1:{port}", "CREW_BACKEND": backend,
                "CREW_TIMEOUT": "60s", "CREW_JOB_TOKEN": "peer-dies-test-token"})
    procs = []
    for rank in range(2):
        procs.append(subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                                      env=dict(env, CREW_RANK=str(rank)), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline, "the ranks did not start"
            assert procs[0].poll() is None, procs[0].communicate()
            time.sleep(0.05)
        procs[1].kill()
        procs[1].wait()
        (tmp_path / "killed").write_text("")
        killed_at = time.monotonic()
        out, err = procs[0].communicate(timeout=60)
        took = time.monotonic() - killed_at
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert procs[0].returncode == 3, err
    assert "error:" in out
    assert took < 10, f"the surviving rank took {took:.1f} s to exit after its peer died\n{err}"


def test_wait_returns_once_asynchronous_collectives_are_done(tmp_path):
    dist.spawn(dist_programs.wait_for_async, args=(str(tmp_path),), nprocs=2)
    for rank in range(2):
        assert (tmp_path / f"rank{rank}").read_text().strip() == "[3.0, 3.0, 3.0, 3.0] [7.0, 7.0]"
