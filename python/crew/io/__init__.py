"""crew.io: Dataset, samplers, DataLoader (Paddle's paddle.io).

A Dataset subclass written in Python defines __getitem__ and __len__; the DataLoader's
worker threads (C++) take the GIL only to call __getitem__. Built-in data sets
(crew.vision.datasets) are C++ and load without the GIL. __getitem__ returns a tuple of
fields (crew.Tensor, NumPy array, int -> int64, float -> float64) or one field; batches are
lists of tensors (one tensor for one-field samples), as Paddle's.
"""
from .._C.io import (TensorDataset, Sampler, SequenceSampler, RandomSampler, BatchSampler,  # noqa: F401
                     DistributedBatchSampler, DataLoader)


class Dataset:
    """Base of map-style data sets: subclasses define __getitem__(idx) and __len__()."""

    def __getitem__(self, idx):
        raise NotImplementedError(f"{type(self).__name__} defines no __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} defines no __len__")


__all__ = ["Dataset", "TensorDataset", "Sampler", "SequenceSampler", "RandomSampler", "BatchSampler",
           "DistributedBatchSampler", "DataLoader"]
