"""crew: data-parallel training in C++, with Paddle's names.

    import crew as paddle
    import crew.distributed as dist

The work runs in crew's C++ core (crew._C): kernels, autograd, DataLoader threads,
collectives. docs/python.md maps Paddle's API to crew's and lists what differs.
"""
from . import _C
from . import _arguments
_arguments.install(_C)  # readable TypeErrors for arguments crew._C does not accept (first)
from ._C import Tensor, dtype, to_tensor  # noqa: F401 (to_tensor: paddle_args wraps it)
from .serialization import save, load  # noqa: E402
from ._C import (Place, CPUPlace, CUDAPlace, CUDAPinnedPlace, set_device, get_device,  # noqa: F401
                 is_compiled_with_cuda, DeviceError, DTypeError)
from ._C import (add, subtract, multiply, divide, exp, log, pow, matmul, sum, mean, argmax,  # noqa: A004
                 reshape, unsqueeze, squeeze, flatten, transpose, concat, stack, split, slice,
                 is_grad_enabled, set_grad_enabled, cast)
from .tensor_ops import no_grad  # noqa: E402
from .autograd_grad import grad  # noqa: E402
from .tensor_math import *  # noqa: E402,F401,F403 (Paddle's creation, math and mask functions)
from . import tensor_methods  # noqa: E402,F401 (installs Tensor's methods and printing)
from .tensor_arith import *  # noqa: E402,F401,F403 (maximum, floor_divide, mm, median, ...)
from .einsum import einsum  # noqa: E402,F401
from .tensor_more import *  # noqa: E402,F401,F403 (t, tril, diag, logsumexp, unique, ...)
from .tensor_common import *  # noqa: E402,F401,F403 (lerp, masked_fill, moveaxis, nansum, ...)
from .tensor_search import *  # noqa: E402,F401,F403 (bincount, histogram, searchsorted, kthvalue, mode)
from .default_dtype import set_default_dtype, get_default_dtype  # noqa: E402,F401
from .tensor_bitwise import *  # noqa: E402,F401,F403 (bitwise_and, bitwise_or, bitwise_xor, bitwise_not)
from .tensor_methods import set_printoptions  # noqa: E402,F401
from .paddle_args import argmax, squeeze, reshape, flatten, to_tensor  # noqa: E402,F811

__version__ = _C.__version__


def seed(value):
    """paddle.seed: seeds crew's generator (parameters made in C++, dropout, shuffling) and
    NumPy's global one, which the Python initializers (crew.nn.initializer) and composed
    layers draw from, so that one call makes a program's initial weights repeatable."""
    import numpy as _np
    _C.seed(int(value))
    _np.random.seed(int(value) % (2 ** 32))

float32 = dtype.float32
float64 = dtype.float64
int32 = dtype.int32
int64 = dtype.int64
uint8 = dtype.uint8
# 16-bit floats: storage and the kernels of docs/kernels.md ("Low precision"); .numpy() of
# a bfloat16 tensor is a float32 array (NumPy has no bfloat16), of a float16 one float16.
bfloat16 = dtype.bfloat16
float16 = dtype.float16
bool = dtype.bool  # noqa: A001 (Paddle's name; nothing below uses the builtin)

from . import device, nn, optimizer, io, vision, text, distributed  # noqa: E402
from .parallel import DataParallel  # noqa: E402
from . import metric, static, hapi, callbacks  # noqa: E402
from . import regularizer  # noqa: E402
from . import amp  # noqa: E402
from .param_attr import ParamAttr  # noqa: E402
from .nn.layer import create_parameter  # noqa: E402,F401
from .hapi import Model, summary  # noqa: E402

from . import _paddle_names  # noqa: E402
_paddle_names.install()  # last: a name Paddle has and crew lacks says so
