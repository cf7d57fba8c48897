"""crew.device: Paddle's paddle.device (where tensors and layers go).

    crew.device.set_device("cpu")          # or "gpu", "gpu:1" in a CUDA build
    crew.device.get_device()               # "cpu"
    crew.device.is_compiled_with_cuda()    # False in a build without CUDA
    crew.device.cuda.device_count()        # 0 without CUDA
"""
from .._C import set_device, get_device, is_compiled_with_cuda  # noqa: F401
from . import cuda  # noqa: F401

__all__ = ["set_device", "get_device", "is_compiled_with_cuda", "cuda"]
