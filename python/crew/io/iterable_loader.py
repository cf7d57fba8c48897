"""DataLoader over an IterableDataset, and get_worker_info (Paddle's paddle.io semantics).

With num_workers == 0 the loader iterates the data set in the caller's thread. With
num_workers = n, n worker threads each iterate their own pass of the data set (crew's workers
are threads, as its C++ DataLoader's; Paddle's are processes), with get_worker_info() giving
their id, so a data set shards its stream by it; batches come round-robin over the workers,
a finished worker skipped, as Paddle's. Collation is crew's C++ default_collate.
"""
import itertools
import queue
import threading

from .. import _C

_worker = threading.local()


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, dataset, seed."""

    def __init__(self, id, num_workers, dataset, seed):  # noqa: A002 (Paddle's name)
        self.id, self.num_workers, self.dataset, self.seed = id, num_workers, dataset, seed

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers})"


def get_worker_info():
    """Inside a DataLoader worker iterating an IterableDataset: its WorkerInfo; else None."""
    return getattr(_worker, "info", None)


def _batches(samples, batch_size, drop_last, collate):
    if batch_size is None:  # no batching: samples as they come
        yield from samples
        return
    while True:
        chunk = list(itertools.islice(samples, batch_size))
        if not chunk or (drop_last and len(chunk) < batch_size):
            return
        yield collate(chunk)


class _Done:
    pass


def _put(out, item, stop):
    """Puts item unless the consumer has gone (stop set); whether it was put."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def _work(loader, info, out, stop):
    _worker.info = info
    try:
        for batch in _batches(iter(loader.dataset), loader.batch_size, loader.drop_last, loader.collate_fn):
            if not _put(out, batch, stop):
                return
        _put(out, _Done(), stop)
    except BaseException as e:  # noqa: BLE001 (handed to the consumer, which raises it)
        _put(out, e, stop)


class _Pass:
    """One pass over the workers' queues, round-robin; stops the workers when dropped."""

    def __init__(self, loader):
        self.loader, self.stop = loader, threading.Event()
        n = loader.num_workers
        self.queues = [queue.Queue(maxsize=loader.prefetch_factor) for _ in range(n)]
        seed = int(_C.uniform([1], 0.0, 2.0 ** 31, "float64").item())
        self.threads = [threading.Thread(target=_work, daemon=True, name=f"crew-io-worker-{i}",
                                         args=(loader, WorkerInfo(i, n, loader.dataset, seed + i), q, self.stop))
                        for i, q in enumerate(self.queues)]
        for t in self.threads:
            t.start()
        self.live = list(range(n))
        self.turn = 0

    def __iter__(self):
        return self

    def __next__(self):
        while self.live:
            w = self.live[self.turn % len(self.live)]
            try:
                item = self.queues[w].get(timeout=self.loader.timeout or None)
            except queue.Empty:
                self.stop.set()
                raise RuntimeError(f"DataLoader: worker {w} gave no batch within "
                                   f"timeout={self.loader.timeout} s") from None
            if isinstance(item, _Done):
                self.live.remove(w)
                continue
            if isinstance(item, BaseException):
                self.stop.set()
                raise RuntimeError(f"DataLoader worker {w}: {type(item).__name__}: {item}") from item
            self.turn += 1
            return item
        raise StopIteration

    def __del__(self):
        self.stop.set()


class IterableLoader:
    """paddle.io.DataLoader(iterable_dataset, batch_size=1, drop_last=False, collate_fn=None,
    num_workers=0, timeout=0, prefetch_factor=2, ...); shuffle and batch_sampler are refused,
    as Paddle refuses them for an IterableDataset. len() is a TypeError (a stream has none)."""

    def __init__(self, dataset, feed_list=None, places=None, return_list=True, batch_sampler=None, batch_size=1,
                 shuffle=False, drop_last=False, collate_fn=None, num_workers=0, use_buffer_reader=True,
                 use_shared_memory=True, timeout=0, worker_init_fn=None, persistent_workers=False,
                 prefetch_factor=2):
        if shuffle:
            raise ValueError("DataLoader: shuffle must be False for an IterableDataset")
        if batch_sampler is not None:
            raise ValueError("DataLoader: batch_sampler is not supported for an IterableDataset")
        if batch_size is not None and int(batch_size) < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got {batch_size}")
        if int(num_workers) < 0:
            raise ValueError(f"DataLoader: num_workers must be >= 0, got {num_workers}")
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn or (lambda samples: _C.io._default_collate(samples))
        self.num_workers = int(num_workers)
        self.timeout = float(timeout)
        self.prefetch_factor = max(1, int(prefetch_factor))
        self.batch_sampler = None

    def __iter__(self):
        if self.num_workers == 0:
            return _batches(iter(self.dataset), self.batch_size, self.drop_last, self.collate_fn)
        return _Pass(self)

    __call__ = __iter__

    def __len__(self):
        raise TypeError("DataLoader over an IterableDataset has no len()")
