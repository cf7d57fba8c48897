"""Paddle's data set combinators (paddle.io): IterableDataset, Subset, random_split,
ComposeDataset, ChainDataset. Map-style ones define __getitem__ and __len__, so crew's C++
DataLoader loads them as any Python data set; iterable ones go through crew.io's iterable
loader (crew/io/iterable_loader.py)."""
import itertools


class Dataset:
    """Base of map-style data sets: subclasses define __getitem__(idx) and __len__()."""

    def __getitem__(self, idx):
        raise NotImplementedError(f"{type(self).__name__} defines no __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} defines no __len__")


class IterableDataset:
    """Base of stream-style data sets: subclasses define __iter__(), yielding samples. In a
    DataLoader with num_workers > 0 every worker iterates its own pass; shard it with
    crew.io.get_worker_info() (id, num_workers) as Paddle's examples do."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} defines no __iter__")

    def __getitem__(self, idx):
        raise RuntimeError(f"{type(self).__name__} is an IterableDataset: it is iterated, not indexed")


class Subset(Dataset):
    """The samples of dataset at indices, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = [int(i) for i in indices]

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Paddle 2.4's random_split: non-overlapping Subsets of the given lengths, whose sum must be
    len(dataset), drawn from a permutation of crew's generator (crew.seed repeats it)."""
    from ..tensor_math import randperm
    lengths = [int(n) for n in lengths]
    if sum(lengths) != len(dataset):
        raise ValueError(f"random_split: the lengths {lengths} sum to {sum(lengths)}, not to the data set's "
                         f"length {len(dataset)}")
    if any(n < 0 for n in lengths):
        raise ValueError(f"random_split: lengths must not be negative, got {lengths}")
    order = randperm(sum(lengths)).numpy().tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, order[end - n:end]) for n, end in zip(lengths, ends)]


def _fields(sample):
    return tuple(sample) if isinstance(sample, (tuple, list)) else (sample,)


class ComposeDataset(Dataset):
    """Map-style data sets of one length side by side: sample i is the fields of each one's
    sample i, concatenated into one tuple."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ComposeDataset: datasets must not be empty")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ComposeDataset: an IterableDataset cannot be composed (use ChainDataset)")
            if len(d) != len(self.datasets[0]):
                raise ValueError(f"ComposeDataset: the data sets' lengths differ "
                                 f"({len(self.datasets[0])} and {len(d)})")

    def __len__(self):
        return len(self.datasets[0])

    def __getitem__(self, idx):
        out = ()
        for d in self.datasets:
            out += _fields(d[idx])
        return out


class ChainDataset(IterableDataset):
    """Iterable data sets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: every data set must be an IterableDataset, got {type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            yield from d
