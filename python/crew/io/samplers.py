"""Samplers written in Python (paddle.io.WeightedRandomSampler) and BatchSampler over them.

crew's own samplers are C++ (crew._C.io); a BatchSampler given a Python sampler (this one,
or a user's iterable of indices with __len__) batches it here, in Python, and a DataLoader
takes it as any Python batch sampler."""
import numpy as np

from .. import _C


class WeightedRandomSampler:
    """Paddle's WeightedRandomSampler(weights, num_samples, replacement=True): num_samples
    indices in [0, len(weights)), drawn with probability weights[i] / sum(weights), from NumPy's
    global generator (crew.seed seeds it)."""

    def __init__(self, weights, num_samples, replacement=True):
        if not isinstance(num_samples, (int, np.integer)) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive int, got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}")
        if isinstance(weights, _C.Tensor):
            weights = weights.numpy()
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.size == 0 or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative and not all zero")
        if not replacement and num_samples > int((w > 0).sum()):
            raise ValueError(f"WeightedRandomSampler: num_samples ({num_samples}) exceeds the indices with weight > 0 "
                             f"({int((w > 0).sum())}) with replacement=False")
        self.weights, self.num_samples, self.replacement = w, int(num_samples), replacement

    def __iter__(self):
        p = self.weights / self.weights.sum()
        idx = np.random.choice(len(self.weights), self.num_samples, self.replacement, p=p)
        return iter(idx.tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler:
    """Paddle's SubsetRandomSampler(indices): the given indices in a fresh random order each
    epoch, from NumPy's global generator (crew.seed seeds it)."""

    def __init__(self, indices, generator=None):
        if isinstance(indices, _C.Tensor):
            indices = indices.numpy()
        idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices).reshape(-1)
        if idx.size == 0:
            raise ValueError("SubsetRandomSampler: indices must not be empty")
        if not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"SubsetRandomSampler: indices must be integers, got {idx.dtype}")
        self.indices, self.generator = idx.astype(np.int64), generator

    def __iter__(self):
        order = self.generator.permutation(len(self.indices)) if self.generator is not None \
            else np.random.permutation(len(self.indices))
        return iter(self.indices[order].tolist())

    def __len__(self):
        return len(self.indices)


class PyBatchSampler:
    """Batches of a Python sampler's indices (batch_size, drop_last as Paddle's BatchSampler)."""

    def __init__(self, sampler, batch_size=1, drop_last=False):
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), bool(drop_last)

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(int(i))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
