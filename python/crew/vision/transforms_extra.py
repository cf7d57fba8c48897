"""Paddle's transforms written in Python (crew.vision.transforms re-exports them): Resize,
CenterCrop, RandomResizedCrop, Pad, ColorJitter (and its Brightness/Contrast/Saturation/Hue
parts), Grayscale, RandomRotation, Transpose, and BaseTransform to subclass.

Each takes a PIL image, a NumPy HWC/HW array or a crew.Tensor and returns the same kind
(transforms_functional.py says which layout a tensor has). Random choices come from NumPy's
global generator, which crew.seed seeds. In a DataLoader they run under the GIL (the C++
transforms, ToTensor, Normalize, RandomCrop, RandomHorizontalFlip, do not).
"""
import math
import numbers

import numpy as np

from . import transforms_functional as F


class BaseTransform:
    """Paddle's BaseTransform: a subclass defines _apply_image(img) (and _get_params(inputs)
    for random ones). keys=None means the input is one image; with keys such as
    ('image', 'label'), the input is a tuple and each field goes through _apply_<key> (fields
    without one pass through unchanged); one output is returned bare, several as a tuple."""

    def __init__(self, keys=None):
        if keys is None:
            keys = ("image",)
        elif isinstance(keys, str):
            keys = (keys,)
        self.keys = tuple(keys)
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        fields = inputs if isinstance(inputs, tuple) else (inputs,)
        self.params = self._get_params(fields)
        out = []
        for key, field in zip(self.keys, fields):
            fn = getattr(self, f"_apply_{key}", None)
            out.append(fn(field) if fn is not None else field)
        out.extend(fields[len(self.keys):])
        return out[0] if len(out) == 1 else tuple(out)

    def _apply_image(self, img):
        raise NotImplementedError(f"{type(self).__name__} defines no _apply_image")


def _size_pair(size, what):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if len(size) != 2:
        raise ValueError(f"{what}: size must be an int or (height, width), got {size}")
    return int(size[0]), int(size[1])


class Resize(BaseTransform):
    """size: (height, width), or an int: the shorter side's new length, aspect kept.
    interpolation: 'nearest' or 'bilinear' (PIL images also 'bicubic', 'box', 'lanczos',
    'hamming')."""

    def __init__(self, size, interpolation="bilinear", keys=None):
        super().__init__(keys)
        if not isinstance(size, numbers.Integral) and len(size) != 2:
            raise ValueError(f"Resize: size must be an int or (height, width), got {size}")
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)


class CenterCrop(BaseTransform):
    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = _size_pair(size, "CenterCrop")

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


class RandomResizedCrop(BaseTransform):
    """Crops a random region (area a `scale` fraction of the image's, aspect ratio in `ratio`,
    10 tries, else the centre) and resizes it to size."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3), interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = _size_pair(size, "RandomResizedCrop")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError(f"RandomResizedCrop: scale and ratio must be (min, max), got {scale}, {ratio}")
        self.scale, self.ratio, self.interpolation = scale, ratio, interpolation

    def _get_param(self, img, attempts=10):
        height, width = F.image_size(img)
        area = height * width
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(attempts):
            target = np.random.uniform(*self.scale) * area
            aspect = math.exp(np.random.uniform(*log_ratio))
            w, h = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return np.random.randint(0, height - h + 1), np.random.randint(0, width - w + 1), h, w
        in_ratio = width / height
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h, w = height, int(round(height * max(self.ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img):
        top, left, h, w = self._get_param(img)
        return F.resize(F.crop(img, top, left, h, w), self.size, self.interpolation)


class Pad(BaseTransform):
    """padding: int, (left/right, top/bottom) or (left, top, right, bottom); fill: a value or
    one per channel (constant mode); padding_mode: constant, edge, reflect or symmetric."""

    def __init__(self, padding, fill=0, padding_mode="constant", keys=None):
        super().__init__(keys)
        F._padding(padding)
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"Pad: padding_mode must be constant, edge, reflect or symmetric, got '{padding_mode}'")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


def _factor_range(value, name, center=1.0, bound=None):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"{name}: the value must be non-negative, got {value}")
        lo, hi = center - value, center + value
        if center == 1.0:
            lo = max(lo, 0.0)
    else:
        lo, hi = float(value[0]), float(value[1])
    if bound is not None and not (bound[0] <= lo <= hi <= bound[1]):
        raise ValueError(f"{name}: the range must lie in {list(bound)}, got {[lo, hi]}")
    return lo, hi


class _Adjust(BaseTransform):
    _fn = None

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = value
        self._range = _factor_range(value, type(self).__name__)

    def _apply_image(self, img):
        if self.value == 0:
            return img
        return type(self)._fn(img, np.random.uniform(*self._range))


class BrightnessTransform(_Adjust):
    _fn = staticmethod(F.adjust_brightness)


class ContrastTransform(_Adjust):
    _fn = staticmethod(F.adjust_contrast)


class SaturationTransform(_Adjust):
    _fn = staticmethod(F.adjust_saturation)


class HueTransform(_Adjust):
    _fn = staticmethod(F.adjust_hue)

    def __init__(self, value, keys=None):
        BaseTransform.__init__(self, keys)
        self.value = value
        self._range = _factor_range(value, "HueTransform", center=0.0, bound=(-0.5, 0.5))


class ColorJitter(BaseTransform):
    """Random brightness, contrast, saturation (factors in [max(0, 1 - v), 1 + v]) and hue
    (a shift in [-v, v], v <= 0.5), applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        self.parts = [BrightnessTransform(brightness), ContrastTransform(contrast),
                      SaturationTransform(saturation), HueTransform(hue)]

    def _apply_image(self, img):
        for i in np.random.permutation(len(self.parts)):
            img = self.parts[i](img)
        return img


class Grayscale(BaseTransform):
    """RGB -> luma (0.299 R + 0.587 G + 0.114 B) with 1 or 3 output channels (a NumPy image
    becomes [H, W, 1] or [H, W, 3]; a PIL one mode 'L' or 'RGB')."""

    def __init__(self, num_output_channels=1, keys=None):
        super().__init__(keys)
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got {num_output_channels}")
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)


class RandomRotation(BaseTransform):
    """Rotates by an angle drawn from degrees ((-d, d) for a number, else (min, max)),
    counter-clockwise, about center (default: the image centre)."""

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0, keys=None):
        super().__init__(keys)
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"RandomRotation: degrees must be non-negative, got {degrees}")
            degrees = (-degrees, degrees)
        elif len(degrees) != 2:
            raise ValueError(f"RandomRotation: degrees must be a number or (min, max), got {degrees}")
        self.degrees = tuple(degrees)
        self.interpolation, self.expand, self.center, self.fill = interpolation, expand, center, fill

    def _apply_image(self, img):
        angle = np.random.uniform(*self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class Transpose(BaseTransform):
    """Permutes the axes of an HWC image (order=(2, 0, 1): HWC -> CHW); a PIL image becomes a
    NumPy array, an HW array gets a channel axis first; a tensor is permuted as it is."""

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = tuple(order)

    def _apply_image(self, img):
        from .. import _C
        if isinstance(img, _C.Tensor):
            return _C.transpose(img, list(self.order))
        a = np.asarray(img)
        if a.ndim == 2:
            a = a[..., np.newaxis]
        return a.transpose(self.order)


__all__ = ["BaseTransform", "Resize", "CenterCrop", "RandomResizedCrop", "Pad", "ColorJitter",
           "BrightnessTransform", "ContrastTransform", "SaturationTransform", "HueTransform",
           "Grayscale", "RandomRotation", "Transpose"]
