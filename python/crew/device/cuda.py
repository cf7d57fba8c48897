"""crew.device.cuda: Paddle's paddle.device.cuda."""
from .. import _C


def device_count():
    """GPUs this process can use: 0 in a build without CUDA or on a machine without GPUs."""
    return _C.cuda_device_count()


__all__ = ["device_count"]
