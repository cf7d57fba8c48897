"""crew's C++ transforms (crew::io, crew._C.vision) with Paddle's Python-side manners: a PIL
image is taken as its pixels (and RandomCrop/RandomHorizontalFlip give a PIL image back),
ToTensor/Normalize take data_format='HWC', and Compose mixes them with Python transforms.

Inside a C++ data set or DataLoader worker, a Compose of C++ transforms only runs without the
GIL; one with a Python transform runs as one Python call that gets the sample as a NumPy HWC
array, and each part sees what the part before it returned, as in Paddle.
"""
import numpy as np

from .. import _C
from .transforms_functional import is_pil

_V = _C.vision


def _pixels(img):
    return np.asarray(img) if is_pil(img) else img


def _like_pil(img, out):
    if not is_pil(img):
        return out
    from PIL import Image
    return Image.fromarray(out.numpy(), img.mode)


def _check_format(data_format, what):
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"{what}: data_format must be 'CHW' or 'HWC', got '{data_format}'")


class ToTensor(_V.ToTensor):
    """uint8 HW/HWC (array, PIL image) -> float32 in [0, 1], CHW (or HWC with data_format='HWC')."""

    def __init__(self, data_format="CHW", keys=None):
        _check_format(data_format, "ToTensor")
        super().__init__("CHW")
        self.data_format = data_format
        self._python_only = data_format == "HWC"

    def __call__(self, img):
        out = super().__call__(_pixels(img))
        return _C.transpose(out, [1, 2, 0]) if self.data_format == "HWC" else out


class Normalize(_V.Normalize):
    """(x - mean) / std per channel of a floating CHW image (HWC with data_format='HWC');
    to_rgb=True first reverses the channel order (BGR -> RGB)."""

    def __init__(self, mean=0.0, std=1.0, data_format="CHW", to_rgb=False, keys=None):
        _check_format(data_format, "Normalize")
        super().__init__(mean, std, "CHW")
        self.data_format, self.to_rgb = data_format, to_rgb
        self._python_only = data_format == "HWC" or to_rgb

    def __call__(self, img):
        img = _pixels(img)
        if self.to_rgb:
            a = img.numpy() if isinstance(img, _C.Tensor) else np.asarray(img)
            img = np.ascontiguousarray(a[..., ::-1] if self.data_format == "HWC" else a[::-1])
        if self.data_format == "HWC":
            return _C.transpose(super().__call__(_C.transpose(_C.to_tensor(img), [2, 0, 1])), [1, 2, 0])
        return super().__call__(img)


class RandomCrop(_V.RandomCrop):
    def __call__(self, img):
        return _like_pil(img, super().__call__(_pixels(img)))


class RandomHorizontalFlip(_V.RandomHorizontalFlip):
    def __call__(self, img):
        return _like_pil(img, super().__call__(_pixels(img)))


class RandomVerticalFlip(_V.RandomVerticalFlip):
    def __call__(self, img):
        return _like_pil(img, super().__call__(_pixels(img)))


def _runs_in_cpp(t):
    return isinstance(t, _V.Transform) and not getattr(t, "_python_only", False)


class _Chain:
    """The parts of a Compose applied in Python, each on what the previous one returned."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Compose(_V.Compose):
    """Applies transforms in order; each may be a crew transform or any Python callable."""

    def __init__(self, transforms):
        self.transforms = list(transforms)
        self._chain = _Chain(self.transforms)
        if all(_runs_in_cpp(t) for t in self.transforms):
            super().__init__(self.transforms)
        else:
            super().__init__([self._chain])

    def __call__(self, img):
        if all(_runs_in_cpp(t) for t in self.transforms) and not is_pil(img):
            return super().__call__(img)
        return self._chain(img)


__all__ = ["ToTensor", "Normalize", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "Compose"]
