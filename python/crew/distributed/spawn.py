"""spawn: runs a Python function in N child processes (Paddle's paddle.distributed.spawn).

    def train(lr):
        dist.init_parallel_env()
        ...
    if __name__ == "__main__":
        dist.spawn(train, args=(0.1,), nprocs=2)      # or gpus='1,3'

Children start with multiprocessing's "spawn" method (a fresh interpreter each, so `func`
must be importable: defined at the top of a module, the call under `if __name__ ==
"__main__"`). Child i gets rank i and the launcher's variables; rank 0 hosts the job's store
on a free loopback port, admitting only clients with the token made for this call. When a child raises, the parent stops the others and raises
ProcessRaisedException with the child's rank and traceback; a child that dies of a signal
gives ProcessExitedException. Children die with the parent (PR_SET_PDEATHSIG), so nothing is
left running.
"""
import ctypes
import io
import multiprocessing
import multiprocessing.connection
import os
import secrets
import signal
import socket
import sys
import traceback
import uuid

from .. import _C

_GRACE_SECONDS = 5.0


class ProcessRaisedException(Exception):
    """A child raised: the message holds its rank and traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = error_pid


class ProcessExitedException(Exception):
    """A child ended with a non-zero exit code or a signal without raising in Python."""

    def __init__(self, msg, error_index, error_pid, exit_code):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = error_pid
        self.exit_code = exit_code


def _devices(nprocs, gpus):
    """crew::dist::spawn's rule: the ids in gpus, else nprocs (-1: one per usable core)."""
    if nprocs is None:
        nprocs = -1
    if not isinstance(nprocs, int):
        raise ValueError(f"spawn: nprocs must be >= 1 or -1, got {nprocs!r}")
    return _C.dist.spawn_devices(nprocs, "" if gpus is None else str(gpus).replace(" ", ""))


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent(parent_pid):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl
        os._exit(1)


def _write_whole_lines():
    """The children share the parent's stdout and stderr: each line goes out in one write, so
    lines of different children never interleave (even under PYTHONUNBUFFERED)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, OSError):
            continue
        raw = io.BufferedWriter(io.FileIO(fd, "w", closefd=False), buffer_size=1 << 16)
        setattr(sys, name, io.TextIOWrapper(raw, encoding=stream.encoding, errors=stream.errors,
                                            line_buffering=True))


def _child_main(func, args, env, error_queue, parent_pid):
    _die_with_parent(parent_pid)
    _write_whole_lines()
    for k, v in env.items():
        if v:
            os.environ[k] = v
        else:
            os.environ.pop(k, None)
    try:
        func(*args)
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as e:  # noqa: B902 (SystemExit with a code passes through)
        if isinstance(e, SystemExit) and e.code in (None, 0):
            raise
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class MultiprocessContext:
    """The children of one spawn call; join() waits for them and raises a child's error."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self._sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every child ended well; False when `timeout` (seconds) passed first."""
        if not self._sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self._sentinels), timeout=timeout)
        failed = None
        for s in ready:
            i = self._sentinels.pop(s)
            self.processes[i].join()
            if self.processes[i].exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self._sentinels
        self.stop()
        self._raise(failed)

    def stop(self):
        """Ends every child still running: SIGTERM, then SIGKILL after a grace."""
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join(_GRACE_SECONDS)
            if p.is_alive():
                p.kill()
                p.join()
        self._sentinels.clear()

    def _raise(self, i):
        p = self.processes[i]
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            msg = (f"\n\n----------------------------------------------\n"
                   f"Process {i} terminated with the following error:\n"
                   f"----------------------------------------------\n\n{tb}")
            raise ProcessRaisedException(msg, i, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"Process {i} (pid {p.pid}) terminated with signal {name}.",
                                         i, p.pid, code)
        raise ProcessExitedException(f"Process {i} (pid {p.pid}) terminated with exit code {code}.",
                                     i, p.pid, code)


def spawn(func, args=(), nprocs=-1, join=True, daemon=False, **options):
    """Starts `func(*args)` in nprocs children (one per id of options['gpus'] when given)."""
    devices = _devices(nprocs, options.get("gpus", options.get("devices")))
    port = _free_port()
    job_id = "spawn-" + uuid.uuid4().hex[:8]
    token = secrets.token_hex(16)  # rank 0's store admits only these children
    ctx = multiprocessing.get_context("spawn")
    processes, queues = [], []
    for rank in range(len(devices)):
        # Every variable the child gets, from crew's one owner of a worker's environment (as
        # crew launch and C++ spawn): rank, store, token, threads; "" unsets one.
        env = dict(_C.dist.spawn_worker_env(rank, devices, port, job_id, token))
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_child_main, args=(func, tuple(args), env, q, os.getpid()), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = MultiprocessContext(processes, queues)
    if not join:
        return context
    try:
        while not context.join():
            pass
    except KeyboardInterrupt:
        context.stop()
        raise
    return context
