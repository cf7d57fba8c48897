"""crew.DataParallel: paddle.DataParallel around any crew.nn.Layer (Python-defined or C++).

The wrapped layer's forward runs as usual (Python calling C++ layers); the gradient sync is
C++ (crew::dist::GradSync, the engine crew::DataParallel wraps too): parameters are broadcast
from rank 0 at construction, gradients are bucketed in reverse registration order and their
all_reduces start while backward is still running, no_sync and the uneven-input check work
exactly as for a C++ model (docs/data_parallel.md).
"""
import contextlib

from . import _C
from .nn.layer import Layer


def _tensors(out, found):
    if isinstance(out, _C.Tensor):
        found.append(out)
    elif isinstance(out, (list, tuple)):
        for o in out:
            _tensors(o, found)
    elif isinstance(out, dict):
        for o in out.values():
            _tensors(o, found)
    return found


def _comm_dtype(comm_dtype):
    """None, or crew's bfloat16/float16 dtype for 'bfloat16'/'float16'/crew.bfloat16/...."""
    if comm_dtype is None:
        return None
    name = comm_dtype if isinstance(comm_dtype, str) else str(comm_dtype).split(".")[-1]
    if name not in ("bfloat16", "float16"):
        raise ValueError(f"DataParallel: comm_dtype must be 'bfloat16', 'float16' or None, got {comm_dtype!r}")
    return getattr(_C.dtype, name)


class DataParallel(Layer):
    """paddle.DataParallel. crew addition: comm_dtype='bfloat16' (or 'float16') all-reduces the
    float32 gradients in that dtype, half the bytes, and averages them back in float32
    (PyTorch DDP's bf16_compress_hook; docs/data_parallel.md). Models decorated at O2 send
    their 16-bit gradients as they are either way."""

    def __init__(self, layers, strategy=None, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, group=None, comm_dtype=None):
        super().__init__("data_parallel")
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: layers must be a crew.nn.Layer, got {type(layers).__name__}")
        self._layers = layers
        named = list(layers.named_parameters())
        object.__setattr__(self, "_sync", _C._GradSync(
            named, layers.buffers(), float(comm_buffer_size), float(last_comm_buffer_size),
            bool(find_unused_parameters), group, comm_dtype=_comm_dtype(comm_dtype)))

    def forward(self, *inputs, **kwargs):
        out = self._layers(*inputs, **kwargs)
        self._sync.prepare_for_backward(_tensors(out, []))
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, backward accumulates gradients locally (no all_reduce)."""
        previous = self._sync.grad_need_sync
        self._sync.grad_need_sync = False
        try:
            yield
        finally:
            self._sync.grad_need_sync = previous

    # The wrapped layer's tensors and state, without a "_layers." prefix (as Paddle's
    # state_dict; checkpoints load with or without the wrapper).
    def named_parameters(self, prefix="", include_sublayers=True):
        return self._layers.named_parameters(prefix, include_sublayers)

    def state_dict(self):
        return self._layers.state_dict()

    def set_state_dict(self, state_dict, use_structured_name=True, strict=True):
        return self._layers.set_state_dict(state_dict, use_structured_name, strict)

    load_dict = set_state_dict
    set_dict = set_state_dict
