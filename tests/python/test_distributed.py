"""crew.distributed: the seed's programs (examples/python), spawn, launch, objects."""
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


def test_spawn_gives_its_children_a_token_of_their_own(tmp_path, monkeypatch):
    # Rank 0's store admits only this spawn's children: a fresh token, not an enclosing job's.
    monkeypatch.setenv("CREW_JOB_TOKEN", "an-enclosing-jobs-secret")
    dist.spawn(dist_programs.write_job_token, args=(str(tmp_path),), nprocs=2)
    tokens = [(tmp_path / f"token{r}").read_text() for r in range(2)]
    assert tokens[0] == tokens[1]
    assert len(tokens[0]) == 32 and tokens[0] != "an-enclosing-jobs-secret"


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
    magic = b"\x00crew.pickle\x00payload"
    cases = [None, True, -3, 2 ** 70, 1.5, "s\u00e9", b"\x00\x01", magic, [1, [2.5, None]],
             {"a": {1: "b"}}, {(1, 2): "tuple key"}, Point(4), {"p": Point(5)}]
    for obj in cases:
        out = ["stale"]
        dist.all_gather_object(out, obj)
        assert out == [obj], obj
    out = []
    dist.all_gather_object(out, (1, "two"))
    assert out == [[1, "two"]]  # a tuple travels as a list, as in the C++ API


def test_parallel_env_reads_paddles_variables(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks) == (1, 4, 4)
    assert dist.get_rank() == 1


def test_new_group_before_init_raises_paddles_assertion():
    with pytest.raises(AssertionError, match="Call paddle.distributed.init_parallel_env first"):
        dist.new_group([0])
