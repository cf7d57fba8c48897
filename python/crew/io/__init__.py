"""crew.io: Dataset, samplers, DataLoader (Paddle's paddle.io).

A Dataset subclass written in Python defines __getitem__ and __len__; the DataLoader's
worker threads (C++) take the GIL only to call __getitem__. Built-in data sets
(crew.vision.datasets) are C++ and load without the GIL. __getitem__ returns a tuple of
fields (crew.Tensor, NumPy array, int -> int64, float -> float64) or one field; batches are
lists of tensors (one tensor for one-field samples), as Paddle's. An IterableDataset goes
through crew/io/iterable_loader.py (worker threads, get_worker_info); Python samplers
(WeightedRandomSampler, a user's) through crew/io/samplers.py.
"""
from .._C import io as _cio
from .._C.io import (TensorDataset, Sampler, SequenceSampler, RandomSampler,  # noqa: F401
                     DistributedBatchSampler)
from .datasets import Dataset, IterableDataset, Subset, random_split, ComposeDataset, ChainDataset  # noqa: F401
from .iterable_loader import IterableLoader, WorkerInfo, get_worker_info  # noqa: F401
from .samplers import WeightedRandomSampler, PyBatchSampler, SubsetRandomSampler  # noqa: F401


class _DispatchMeta(type):
    """A class whose construction picks the implementation, and isinstance accepts each."""

    def __call__(cls, *args, **kwargs):
        return cls._make(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._kinds)


class DataLoader(metaclass=_DispatchMeta):
    """paddle.io.DataLoader: crew's C++ loader for a map-style data set, the iterable loader
    for an IterableDataset (crew/io/iterable_loader.py)."""
    _kinds = (_cio.DataLoader, IterableLoader)

    @staticmethod
    def _make(dataset, *args, **kwargs):
        if isinstance(dataset, IterableDataset):
            return IterableLoader(dataset, *args, **kwargs)
        return _cio.DataLoader(dataset, *args, **kwargs)


class BatchSampler(metaclass=_DispatchMeta):
    """paddle.io.BatchSampler(dataset=None, sampler=None, shuffle=False, batch_size=1,
    drop_last=False): C++ over a data set or a crew sampler, Python over a Python sampler."""
    _kinds = (_cio.BatchSampler, PyBatchSampler)

    @staticmethod
    def _make(dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False):
        if sampler is not None and not isinstance(sampler, _cio.Sampler):
            if dataset is not None or shuffle:
                raise ValueError("BatchSampler: give either dataset or sampler; shuffle must be False with a sampler")
            return PyBatchSampler(sampler, batch_size, drop_last)
        return _cio.BatchSampler(dataset, sampler, shuffle, batch_size, drop_last)


__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Sampler", "SequenceSampler", "RandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedBatchSampler", "DataLoader", "Subset",
           "random_split", "ComposeDataset", "ChainDataset", "get_worker_info", "WorkerInfo", "SubsetRandomSampler"]
