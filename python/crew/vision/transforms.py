"""crew.vision.transforms: Paddle's image transforms, run in C++ (crew::io transforms).

Compose accepts these and any Python callable (which receives a NumPy array and returns an
array or a crew.Tensor; it runs under the GIL). Images are CHW: data_format='HWC' is a
ValueError.
"""
from .._C.vision import (Transform as BaseTransform, ToTensor, Normalize, Compose,  # noqa: F401
                         RandomCrop, RandomHorizontalFlip)

__all__ = ["BaseTransform", "ToTensor", "Normalize", "Compose", "RandomCrop", "RandomHorizontalFlip"]
