"""crew.vision.transforms: Paddle's image transforms.

ToTensor, Normalize, RandomCrop, RandomHorizontalFlip and RandomVerticalFlip run in C++ (crew::io transforms,
without the GIL in DataLoader workers); Resize, CenterCrop, RandomResizedCrop, Pad,
ColorJitter, Grayscale, RandomRotation and Transpose are Python (transforms_extra.py). Each
takes a PIL image, a NumPy HWC array or a crew.Tensor; Compose accepts these and any Python
callable. docs/data.md lists the layouts and what comes back.
"""
from .transforms_cpp import (Compose, Normalize, RandomCrop, RandomHorizontalFlip,  # noqa: F401
                             RandomVerticalFlip, ToTensor)
from .transforms_extra import (BaseTransform, BrightnessTransform, CenterCrop, ColorJitter,  # noqa: F401
                               ContrastTransform, Grayscale, HueTransform, Pad, RandomResizedCrop,
                               RandomRotation, Resize, SaturationTransform, Transpose)
from . import transforms_functional as functional  # noqa: F401

__all__ = ["BaseTransform", "ToTensor", "Normalize", "Compose", "RandomCrop", "RandomHorizontalFlip",
           "RandomVerticalFlip", "Resize", "CenterCrop", "RandomResizedCrop", "Pad", "ColorJitter",
           "BrightnessTransform", "ContrastTransform", "SaturationTransform", "HueTransform", "Grayscale",
           "RandomRotation", "Transpose", "functional"]
