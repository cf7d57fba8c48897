"""Paddle's paddle.amp: automatic mixed precision.

auto_cast sets crew's C++ autocast state (crew/autograd/autocast.h): white-list ops (conv2d,
linear, matmul) run in float16/bfloat16, black-list ops (softmax, cross_entropy, layer_norm,
sum, mean, ...) in float32. GradScaler scales the loss and skips steps whose gradients hold an
inf or a NaN; decorate prepares models and optimizers for level O2 (docs/python.md, "Mixed
precision").
"""
from .auto_cast import (auto_cast, amp_guard, decorate, white_list, black_list,  # noqa: F401
                        is_float16_supported, is_bfloat16_supported)
from .grad_scaler import GradScaler, AmpScaler  # noqa: F401

__all__ = ["auto_cast", "decorate", "GradScaler", "is_float16_supported", "is_bfloat16_supported"]
