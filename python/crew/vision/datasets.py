"""crew.vision.datasets: Paddle's MNIST, FashionMNIST, Cifar10 and Cifar100, decoded in C++.

Samples are (image, label): the image uint8 [H, W] (MNIST) / [H, W, C] (Cifar10), or what
the transform returns (ToTensor: float32 [C, H, W]); the label int64 [] (Paddle gives
MNIST's as [1]; a scalar lets the seed's `unsqueeze(label, 1)` work for both data sets).
crew never downloads: download=True only changes the error message when the files are
missing, to say where to put them.
"""
import os
import pickle
import tarfile

from .. import _C

PADDLE_CIFAR_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "paddle", "dataset", "cifar")
CIFAR10_PYTHON_ARCHIVE = "cifar-10-python.tar.gz"
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/" + CIFAR10_PYTHON_ARCHIVE
CIFAR100_PYTHON_ARCHIVE = "cifar-100-python.tar.gz"
CIFAR100_URL = "https://www.cs.toronto.edu/~kriz/" + CIFAR100_PYTHON_ARCHIVE


def _mnist_dir(image_path, label_path):
    paths = [p for p in (image_path, label_path) if p]
    dirs = {os.path.dirname(os.path.abspath(p)) for p in paths}
    if len(dirs) > 1:
        raise ValueError(f"image_path and label_path must be in one directory, got {sorted(dirs)}")
    return dirs.pop() if dirs else ""


def _init_mnist(self, cpp, image_path, label_path, mode, transform, download, data_dir):
    data_dir = data_dir or _mnist_dir(image_path, label_path)
    try:
        cpp.__init__(self, mode.lower(), data_dir, transform)
    except OSError as e:
        if not download:
            raise
        raise OSError(f"{e}\ncrew does not download data sets: put the four IDX files in one of "
                      "those directories, or pass image_path=/label_path=") from None


class MNIST(_C.vision.MNIST):
    """MNIST(image_path=None, label_path=None, mode='train', transform=None, download=True).
    The IDX files (gzipped or not) are looked for beside image_path, else in
    $CREW_DATA_DIR/mnist, $CREW_DATA_DIR and /usr/share/datasets/mnist."""

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None, download=True,
                 backend=None, data_dir=None):
        _init_mnist(self, _C.vision.MNIST, image_path, label_path, mode, transform, download, data_dir)


class FashionMNIST(_C.vision.FashionMNIST):
    """FashionMNIST: MNIST's format and arguments; found where Debian's dataset-fashion-mnist
    puts it (/usr/share/datasets/fashion-mnist) or in $CREW_DATA_DIR/fashion-mnist."""

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None, download=True,
                 backend=None, data_dir=None):
        _init_mnist(self, _C.vision.FashionMNIST, image_path, label_path, mode, transform, download, data_dir)


def _batch_names(mode):
    return [f"data_batch_{i}" for i in range(1, 6)] if mode == "train" else ["test_batch"]


def _python_batches(path, names, inner_dir="cifar-10-batches-py", marker="data_batch_1"):
    """Name -> bytes of those pickled batches (the ones present) in a cifar-10-python archive
    or directory (cifar-100-python: inner_dir and marker of its own); None when `path` is not
    the Python version (it has no `marker` member)."""
    if os.path.isdir(path):
        inner = os.path.join(path, inner_dir)
        base = inner if os.path.isdir(inner) else path
        if not os.path.exists(os.path.join(base, marker)):
            return None
        out = {}
        for name in names:
            if os.path.exists(os.path.join(base, name)):
                with open(os.path.join(base, name), "rb") as f:
                    out[name] = f.read()
        return out
    if not tarfile.is_tarfile(path):
        return None
    with tarfile.open(path, "r:*") as tar:
        members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
        if marker not in members:
            return None
        return {name: tar.extractfile(members[name]).read() for name in names if name in members}


def _unpickle_batches(batches, names, what):
    """images uint8 [N, 3072], labels of the named batches. The archive is a pickle (as
    Paddle reads it): load only files you trust."""
    import numpy as np

    images, labels = [], []
    for name in names:
        if name not in batches:
            raise OSError(f"Cifar: {what} has no member {name}")
        d = pickle.loads(batches[name], encoding="bytes")
        data = d.get(b"data", d.get("data"))
        lab = next((d[k] for k in (b"labels", "labels", b"fine_labels", "fine_labels") if k in d), None)
        if data is None or lab is None:
            raise OSError(f"Cifar: {what}:{name} has no 'data'/'labels' (or 'fine_labels') entries")
        images.append(np.asarray(data, dtype=np.uint8).reshape(-1, 3072))
        labels.extend(int(v) for v in lab)
    return np.concatenate(images), labels


class Cifar10(_C.vision.Cifar10):
    """Cifar10(data_file=None, mode='train', transform=None, download=True).

    data_file may be the Python version Paddle downloads (cifar-10-python.tar.gz, or its
    extracted cifar-10-batches-py directory) or the binary version (cifar-10-binary.tar.gz or
    its directory). Without data_file: Paddle's cache (~/.cache/paddle/dataset/cifar/), then
    $CREW_DATA_DIR/cifar10, $CREW_DATA_DIR and /usr/share/datasets/cifar10."""

    def __init__(self, data_file=None, mode="train", transform=None, download=True, backend=None):
        mode = mode.lower()
        if mode not in ("train", "test"):
            raise ValueError(f"Cifar10: mode must be 'train' or 'test', got '{mode}'")
        path = data_file
        if path is None:
            cached = os.path.join(PADDLE_CIFAR_CACHE, CIFAR10_PYTHON_ARCHIVE)
            path = cached if os.path.exists(cached) else None
        elif not os.path.exists(path):
            raise OSError(f"Cifar10: data_file {path} does not exist")
        names = _batch_names(mode)
        batches = _python_batches(path, names) if path else None
        if batches is not None:
            images, labels = _unpickle_batches(batches, names, path)
            _C.vision.Cifar10.__init__(self, images=images, labels=labels, what=path, mode=mode,
                                       transform=transform)
            return
        try:
            _C.vision.Cifar10.__init__(self, mode, path or "", transform)
        except OSError as e:
            if not download or data_file is not None:
                raise
            raise OSError(f"{e}\ncrew does not download data sets: put {CIFAR10_PYTHON_ARCHIVE} (from "
                          f"{CIFAR10_URL}) in {PADDLE_CIFAR_CACHE}/ as Paddle would, or pass "
                          "data_file=") from None


class Cifar100(_C.vision.Cifar10):
    """Cifar100(data_file=None, mode='train', transform=None, download=True): the Python
    version Paddle downloads (cifar-100-python.tar.gz, or its extracted cifar-100-python
    directory), its fine labels (0..99) as Paddle's; without data_file, Paddle's cache
    (~/.cache/paddle/dataset/cifar/). Samples as Cifar10's."""

    def __init__(self, data_file=None, mode="train", transform=None, download=True, backend=None):
        mode = mode.lower()
        if mode not in ("train", "test"):
            raise ValueError(f"Cifar100: mode must be 'train' or 'test', got '{mode}'")
        path = data_file if data_file is not None else os.path.join(PADDLE_CIFAR_CACHE, CIFAR100_PYTHON_ARCHIVE)
        if not os.path.exists(path):
            if data_file is not None:
                raise OSError(f"Cifar100: data_file {path} does not exist")
            raise OSError(f"Cifar100: {path} does not exist\ncrew does not download data sets: put "
                          f"{CIFAR100_PYTHON_ARCHIVE} (from {CIFAR100_URL}) in {PADDLE_CIFAR_CACHE}/ as Paddle "
                          "would, or pass data_file=")
        batches = _python_batches(path, [mode], "cifar-100-python", mode)
        if batches is None:
            raise OSError(f"Cifar100: {path} is not the Python version of CIFAR-100 (no '{mode}' member)")
        images, labels = _unpickle_batches(batches, [mode], path)
        _C.vision.Cifar10.__init__(self, images=images, labels=labels, what=path, mode=mode, transform=transform,
                                   num_classes=100)


from .folder import DatasetFolder, ImageFolder  # noqa: E402

__all__ = ["MNIST", "FashionMNIST", "Cifar10", "Cifar100", "DatasetFolder", "ImageFolder"]
