"""crew.io: Python data sets in C++ loader threads, samplers, DataLoader semantics."""
import threading
import time

import numpy as np
import pytest

import crew
from crew.io import (BatchSampler, DataLoader, Dataset, DistributedBatchSampler, RandomSampler,
                     SequenceSampler, TensorDataset)


class Squares(Dataset):
    def __init__(self, n=10):
        self.n = n
        self.threads = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.threads.add(threading.get_ident())
        return np.full((2,), i * i, np.float32), i


@pytest.mark.parametrize("num_workers", [0, 1, 3])
def test_python_dataset_batches_in_order_whatever_the_workers(num_workers):
    ds = Squares(10)
    loader = DataLoader(ds, batch_size=4, num_workers=num_workers)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[1].numpy().tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[1][0].shape == [4, 2] and batches[1][0].dtype == crew.float32
    assert batches[1][1].dtype == crew.int64
    np.testing.assert_array_equal(batches[2][0].numpy()[:, 0], [64, 81])
    if num_workers > 0:  # __getitem__ ran in the loader's threads, not the main one
        assert threading.get_ident() not in ds.threads


def test_loader_is_callable_as_the_seed_calls_it_and_reiterable():
    loader = DataLoader(Squares(6), batch_size=3, drop_last=True)
    assert [b[1].numpy().tolist() for b in loader()] == [[0, 1, 2], [3, 4, 5]]
    assert len(list(loader)) == 2


def test_a_bare_field_gives_a_bare_tensor_and_python_floats_are_float64():
    class Floats(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * 0.5

    (a, b) = list(DataLoader(Floats(), batch_size=2))
    assert isinstance(a, crew.Tensor) and a.dtype == crew.float64
    assert a.numpy().tolist() == [0.0, 0.5] and b.numpy().tolist() == [1.0]


def test_a_list_of_numbers_is_one_field():
    class Vectors(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return [i, i + 1]

    a, b = list(DataLoader(Vectors(), batch_size=2))
    assert isinstance(a, crew.Tensor) and a.shape == [2, 2] and a.numpy().tolist() == [[0, 1], [1, 2]]
    assert b.shape == [1, 2]


def test_an_error_in_getitem_names_the_sample_and_stops_the_workers():
    class Bad(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i == 5:
                raise ValueError("cannot decode")
            return i

    with pytest.raises(RuntimeError, match=r"sample 5: .*Bad.__getitem__\(5\).*cannot decode"):
        for _ in DataLoader(Bad(), batch_size=2, num_workers=2):
            pass


@pytest.mark.parametrize("num_workers", [0, 2])
def test_timeout_raises_on_time_while_getitem_hangs(num_workers):
    # A hung __getitem__ used to delay the TimeoutError until it returned (never, for a real
    # hang). The gate opens after 20 s at the latest, so a broken timeout fails, not stalls.
    gate = threading.Event()

    class Hangs(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            gate.wait(20)
            return i

    start = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=r"batch 0 .*500 ms timeout.*Dataset::get\(0\)"):
            for _ in DataLoader(Hangs(), batch_size=2, num_workers=num_workers, timeout=0.5):
                pass
        assert time.monotonic() - start < 10
    finally:
        gate.set()  # the abandoned worker returns and exits
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        DataLoader(Squares(4), timeout=-1)


def test_unsupported_samples_and_objects_are_type_errors():
    class Strings(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return "x"

    with pytest.raises(RuntimeError, match="str"):
        list(DataLoader(Strings(), batch_size=2))
    with pytest.raises(TypeError, match="__getitem__ and __len__"):
        DataLoader(object())


def test_breaking_out_of_a_pass_early_leaves_the_loader_usable():
    loader = DataLoader(Squares(100), batch_size=2, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 3:
            break
    assert len(list(loader)) == 50


def test_collate_fn_and_a_python_batch_sampler():
    def collate(samples):
        xs = np.stack([s[0].numpy() for s in samples])
        return xs.sum(axis=1), np.array([len(samples)])

    loader = DataLoader(Squares(5), batch_sampler=[[4, 0], [2]], collate_fn=collate, num_workers=1)
    out = [(b[0].numpy().tolist(), b[1].numpy().tolist()) for b in loader]
    assert out == [([32.0, 0.0], [2]), ([8.0], [1])]
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(Squares(5), batch_sampler=[[0]], batch_size=4)


def test_batch_sampler_and_samplers():
    assert list(BatchSampler(Squares(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert len(BatchSampler(Squares(5), batch_size=2, drop_last=True)) == 2
    assert list(BatchSampler(sampler=SequenceSampler(range(3)), batch_size=3)) == [[0, 1, 2]]
    assert sorted(RandomSampler(range(6))) == list(range(6))
    shuffled = [i for b in BatchSampler(Squares(50), shuffle=True, batch_size=7) for i in b]
    assert sorted(shuffled) == list(range(50)) and shuffled != list(range(50))


def test_distributed_batch_sampler_is_paddles():
    # Paddle: pad to a multiple of nranks from the front, shuffle with RandomState(epoch) after
    # padding, whole batches interleaved over the ranks.
    ds = Squares(10)
    per_rank = [list(DistributedBatchSampler(ds, 2, num_replicas=3, rank=r)) for r in range(3)]
    assert per_rank[0] == [[0, 1], [6, 7]]
    assert per_rank[1] == [[2, 3], [8, 9]]
    assert per_rank[2] == [[4, 5], [0, 1]]
    s = DistributedBatchSampler(ds, 5, num_replicas=1, rank=0, shuffle=True)
    s.set_epoch(4)
    expected = np.arange(10)
    np.random.RandomState(4).shuffle(expected)
    assert [i for b in s for i in b] == expected.tolist()
    assert s.epoch == 5  # a pass advances the epoch
    assert (s.nranks, s.local_rank, s.num_samples, s.total_size) == (1, 0, 10, 10)


def test_tensor_dataset_and_cpp_dataset_indexing():
    x = crew.to_tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = crew.to_tensor(np.arange(6))
    ds = TensorDataset([x, y])
    assert len(ds) == 6
    row = ds[-1]
    assert isinstance(row, tuple) and row[0].numpy().tolist() == [10.0, 11.0] and row[1].item() == 5
    with pytest.raises(IndexError):
        ds[6]
    (bx, by), = list(DataLoader(ds, batch_size=6, shuffle=True))
    assert sorted(by.numpy().tolist()) == list(range(6))
    np.testing.assert_array_equal(bx.numpy()[:, 0], by.numpy() * 2)


def test_tqdm_runs_over_a_loader():
    tqdm = pytest.importorskip("tqdm").tqdm
    n = sum(1 for _ in tqdm(DataLoader(Squares(9), batch_size=2, num_workers=2), disable=False))
    assert n == 5
