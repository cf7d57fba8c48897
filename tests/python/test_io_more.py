"""crew.io beyond map-style loading (issue 30): IterableDataset in the DataLoader with and
without workers, get_worker_info, Subset, random_split, ComposeDataset, ChainDataset,
WeightedRandomSampler; examples from Paddle 2.4's paddle.io documentation."""
import math
import threading

import numpy as np
import pytest

import crew
from crew.io import (BatchSampler, ChainDataset, ComposeDataset, DataLoader, Dataset, IterableDataset, Subset,
                     WeightedRandomSampler, get_worker_info, random_split)


class RandomStream(IterableDataset):
    """Paddle's IterableDataset example: num_samples samples (image, label)."""

    def __init__(self, num_samples):
        self.num_samples = num_samples

    def __iter__(self):
        for i in range(self.num_samples):
            yield np.full([4], i, "float32"), np.array([i], "int64")


class SplitStream(IterableDataset):
    """Paddle's get_worker_info example: each worker yields its share of [start, end)."""

    def __init__(self, start, end):
        self.start, self.end = start, end
        self.seen = []

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
            self.seen.append((info.id, info.num_workers, threading.get_ident()))
        for i in range(lo, hi):
            yield np.array([i], "int64")


class Numbers(Dataset):
    def __init__(self, n, offset=0):
        self.n, self.offset = n, offset

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.array([i + self.offset], "float32"), i + self.offset


def test_iterable_dataset_batches_without_workers():
    loader = DataLoader(RandomStream(10), batch_size=4, num_workers=0)
    batches = list(loader)
    assert [b[1].shape for b in batches] == [[4, 1], [4, 1], [2, 1]]
    assert batches[0][0].dtype == crew.float32 and batches[2][1].numpy().ravel().tolist() == [8, 9]
    assert len(list(DataLoader(RandomStream(10), batch_size=4, drop_last=True))) == 2
    assert get_worker_info() is None
    with pytest.raises(TypeError, match="no len"):
        len(loader)


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_iterable_dataset_shards_by_worker_info(num_workers):
    ds = SplitStream(3, 10)
    loader = DataLoader(ds, batch_size=1, num_workers=num_workers)
    assert isinstance(loader, DataLoader)
    values = sorted(int(b.numpy().ravel()[0]) for b in loader)
    assert values == list(range(3, 10))  # each sample once: the workers shard the stream
    assert sorted(i for i, _, _ in ds.seen) == list(range(num_workers))
    assert all(n == num_workers for _, n, _ in ds.seen)
    assert threading.get_ident() not in {tid for _, _, tid in ds.seen}


def test_iterable_workers_without_sharding_each_yield_the_whole_stream_round_robin():
    loader = DataLoader(RandomStream(3), batch_size=None, num_workers=2)
    labels = [int(s[1][0]) for s in loader]
    assert labels == [0, 0, 1, 1, 2, 2]  # as Paddle: every worker a full pass, round robin


def test_iterable_worker_errors_reach_the_caller():
    class Broken(IterableDataset):
        def __iter__(self):
            yield np.zeros([1], "float32")
            raise KeyError("bad sample")

    with pytest.raises(RuntimeError, match="bad sample"):
        list(DataLoader(Broken(), batch_size=1, num_workers=2))
    with pytest.raises(ValueError, match="shuffle"):
        DataLoader(RandomStream(2), shuffle=True)


def test_subset_and_random_split():
    ds = Numbers(10)
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3 and sub[0][1] == 7
    crew.seed(5)
    a, b = random_split(ds, [7, 3])
    got = sorted(a[i][1] for i in range(len(a))) + sorted(b[i][1] for i in range(len(b)))
    assert len(a) == 7 and len(b) == 3 and sorted(got) == list(range(10))
    crew.seed(5)
    a2, _ = random_split(ds, [7, 3])
    assert a2.indices == a.indices  # crew.seed repeats the split
    with pytest.raises(ValueError, match="sum to"):
        random_split(ds, [3, 3])
    batch = next(iter(DataLoader(sub, batch_size=3)))
    assert batch[1].numpy().tolist() == [7, 2, 5]


def test_compose_and_chain_datasets():
    comp = ComposeDataset([Numbers(4), Numbers(4, offset=100)])
    assert len(comp) == 4 and len(comp[1]) == 4 and comp[1][3] == 101
    batch = next(iter(DataLoader(comp, batch_size=2)))
    assert len(batch) == 4 and batch[3].numpy().tolist() == [100, 101]
    with pytest.raises(ValueError, match="lengths differ"):
        ComposeDataset([Numbers(2), Numbers(3)])
    chain = ChainDataset([RandomStream(2), RandomStream(3)])
    assert [int(s[1][0]) for s in chain] == [0, 1, 0, 1, 2]
    assert len(list(DataLoader(chain, batch_size=2))) == 3
    with pytest.raises(TypeError, match="IterableDataset"):
        ChainDataset([Numbers(2)])


def test_weighted_random_sampler():
    np.random.seed(0)
    sampler = WeightedRandomSampler([0.1, 0.3, 0.5, 0.7, 0.2], 7)
    idx = list(sampler)
    assert len(sampler) == 7 and len(idx) == 7 and all(0 <= i < 5 for i in idx)
    never_zero = WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 200)
    assert set(never_zero) == {1, 3}
    once = list(WeightedRandomSampler([1, 1, 1], 3, replacement=False))
    assert sorted(once) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples"):
        WeightedRandomSampler([1, 1], 3, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([-1, 1], 1)
    bs = BatchSampler(sampler=WeightedRandomSampler([0, 0, 1], 5), batch_size=2)
    assert isinstance(bs, BatchSampler) and len(bs) == 3
    loader = DataLoader(Numbers(3), batch_sampler=bs)
    assert [b[1].numpy().tolist() for b in loader] == [[2, 2], [2, 2], [2]]


def test_leaving_an_iterable_pass_early_stops_its_workers():
    it = iter(DataLoader(RandomStream(10 ** 6), batch_size=2, num_workers=2, prefetch_factor=1))
    next(it)
    threads = it.threads
    del it
    for t in threads:
        t.join(timeout=10)
        assert not t.is_alive(), "a worker kept running after its pass was dropped"


def test_subset_random_sampler_permutes_its_indices_each_epoch_and_repeats_under_seed():
    from crew.io import SubsetRandomSampler
    crew.seed(3)
    s = SubsetRandomSampler([3, 5, 7, 9, 11])
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == [3, 5, 7, 9, 11] and len(s) == 5
    crew.seed(3)
    assert list(s) == first
    loader = DataLoader(crew.io.TensorDataset([crew.arange(12, dtype="float32")]),
                        batch_sampler=BatchSampler(sampler=s, batch_size=2))
    seen = [v for b in loader for v in b[0].numpy().tolist()]
    assert sorted(seen) == [3, 5, 7, 9, 11]
    with pytest.raises(ValueError, match="integers"):
        SubsetRandomSampler([0.5])
