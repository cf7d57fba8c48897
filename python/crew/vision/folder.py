"""Paddle's paddle.vision.datasets.DatasetFolder and ImageFolder: images in folders.

    root/cat/1.jpg, root/cat/2.png, root/dog/a.jpg  ->  DatasetFolder(root): classes
    ['cat', 'dog'], samples [(root/cat/1.jpg, 0), (root/cat/2.png, 0), (root/dog/a.jpg, 1)]

Files are decoded by Pillow (Debian's python3-pil, imported on first use), which releases
the GIL while it decodes, so DataLoader worker threads decode in parallel. The default loader
gives an RGB PIL image (image backend 'pil', Paddle's default) or, with
set_image_backend('cv2'), a uint8 HWC NumPy array in BGR order, as cv2.imread would.
"""
import os

import numpy as np

from ..io import Dataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
_BACKENDS = ("pil", "cv2")
_backend = ["pil"]


def set_image_backend(backend):
    """'pil' (default loaders give PIL images) or 'cv2' (uint8 BGR HWC NumPy arrays)."""
    if backend not in _BACKENDS:
        raise ValueError(f"set_image_backend: backend must be 'pil' or 'cv2', got {backend!r}")
    _backend[0] = backend


def get_image_backend():
    return _backend[0]


def image_load(path, backend=None):
    """Decodes an image file: an RGB PIL image ('pil') or a uint8 BGR HWC array ('cv2')."""
    backend = backend or get_image_backend()
    if backend not in _BACKENDS:
        raise ValueError(f"image_load: backend must be 'pil' or 'cv2', got {backend!r}")
    from PIL import Image
    with open(path, "rb") as f:
        img = Image.open(f)
        img = img.convert("RGB")
    return img if backend == "pil" else np.ascontiguousarray(np.asarray(img)[..., ::-1])


def default_loader(path):
    return image_load(path)


def has_valid_extension(filename, extensions):
    return filename.lower().endswith(tuple(e.lower() for e in extensions))


def _validity(extensions, is_valid_file, who):
    if extensions is not None and is_valid_file is not None:
        raise ValueError(f"{who}: pass extensions or is_valid_file, not both")
    if is_valid_file is not None:
        return is_valid_file
    extensions = IMG_EXTENSIONS if extensions is None else extensions
    return lambda path: has_valid_extension(path, extensions)


def _walk_files(directory, valid):
    """Paths under directory (links followed) that `valid` accepts, in sorted order."""
    out = []
    for root, _, names in sorted(os.walk(directory, followlinks=True)):
        out.extend(os.path.join(root, n) for n in sorted(names) if valid(os.path.join(root, n)))
    return out


def _check_root(root, who):
    root = os.path.expanduser(str(root))
    if not os.path.isdir(root):
        raise OSError(f"{who}: root {root} is not a directory")
    return root


class DatasetFolder(Dataset):
    """DatasetFolder(root, loader=None, extensions=None, transform=None, is_valid_file=None).

    One class per sub-directory of root (sorted names: classes, class_to_idx); samples are
    (path, class index) for the files below them that have one of `extensions` (default:
    IMG_EXTENSIONS, case-insensitive) or that is_valid_file(path) accepts. An item is
    (transform(loader(path)), class index)."""

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = _check_root(root, "DatasetFolder")
        self.transform = transform
        valid = _validity(extensions, is_valid_file, "DatasetFolder")
        self.classes, self.class_to_idx = self._find_classes(self.root)
        self.samples = [(path, self.class_to_idx[c]) for c in self.classes
                        for path in _walk_files(os.path.join(self.root, c), valid)]
        if not self.samples:
            raise RuntimeError(f"DatasetFolder: found no files in the sub-directories of {self.root} "
                               f"(extensions: {', '.join(extensions or IMG_EXTENSIONS)})")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions if is_valid_file is None else None
        self.targets = [s[1] for s in self.samples]

    @staticmethod
    def _find_classes(directory):
        classes = sorted(e.name for e in os.scandir(directory) if e.is_dir())
        return classes, {c: i for i, c in enumerate(classes)}

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(Dataset):
    """ImageFolder(root, loader=None, extensions=None, transform=None, is_valid_file=None):
    every image below root, no labels; samples are paths and an item is [transform(loader(path))]
    (a one-element list, as Paddle's)."""

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = _check_root(root, "ImageFolder")
        self.transform = transform
        self.samples = _walk_files(self.root, _validity(extensions, is_valid_file, "ImageFolder"))
        if not self.samples:
            raise RuntimeError(f"ImageFolder: found no files in {self.root} "
                               f"(extensions: {', '.join(extensions or IMG_EXTENSIONS)})")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions if is_valid_file is None else None

    def __getitem__(self, index):
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self):
        return len(self.samples)


__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "default_loader", "image_load",
           "set_image_backend", "get_image_backend"]
