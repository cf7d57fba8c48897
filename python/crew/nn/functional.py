"""crew.nn.functional: Paddle's paddle.nn.functional, in C++ (crew::nn::functional)."""
from .._C.nn.functional import (accuracy, cross_entropy, flatten, gelu, linear, log_softmax,  # noqa: F401
                                mse_loss, relu, sigmoid, softmax, tanh)
