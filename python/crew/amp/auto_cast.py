"""auto_cast (a context manager and a decorator) and decorate, over crew._C.amp."""
import functools

from .. import _C

_amp = _C.amp

_DTYPES = ("float16", "bfloat16")


def white_list():
    """The default white list: ops run in the low dtype inside auto_cast."""
    return set(_amp.default_white_list())


def black_list():
    """The default black list: ops run in float32 inside auto_cast."""
    return set(_amp.default_black_list())


def _op_set(ops, arg):
    if ops is None:
        return set()
    if isinstance(ops, str) or not all(isinstance(o, str) for o in ops):
        raise TypeError(f"auto_cast(): argument '{arg}' must be a set or list of op names, got {ops!r}")
    return set(ops)


def _dtype_name(dtype):
    """'bfloat16' for 'bfloat16' or crew.bfloat16."""
    return dtype if isinstance(dtype, str) else str(dtype).split(".")[-1]


def _check_dtype(dtype, func):
    name = _dtype_name(dtype)
    if name not in _DTYPES:
        raise ValueError(f"{func}(): dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    return name


def _check_level(level, func, allowed=("O0", "O1", "O2")):
    if level not in allowed:
        raise ValueError(f"{func}(): level must be one of {', '.join(allowed)}, got {level!r}")
    return level


class auto_cast:  # noqa: N801 (Paddle's name)
    """auto_cast(enable=True, custom_white_list=None, custom_black_list=None, level='O1',
    dtype='float16'): inside, ops of the white list (plus custom_white_list) cast their float32
    operands to `dtype` and ops of the black list (plus custom_black_list) run in float32.
    The casts are recorded by autograd, so float32 parameters get float32 gradients. Level O2
    also runs the ops of neither list in `dtype`. Usable as a decorator too. The state is
    per thread; backward runs with it off."""

    def __init__(self, enable=True, custom_white_list=None, custom_black_list=None, level="O1",
                 dtype="float16"):
        self._args = (bool(enable), _check_dtype(dtype, "auto_cast"), _check_level(level, "auto_cast"),
                      _op_set(custom_white_list, "custom_white_list"),
                      _op_set(custom_black_list, "custom_black_list"))
        conflict = self._args[3] & self._args[4]
        if conflict:
            raise ValueError(f"auto_cast(): {sorted(conflict)} in both custom_white_list and custom_black_list")
        self._scopes = []

    def __enter__(self):
        scope = _amp.AutocastScope(*self._args)
        scope.__enter__()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc):
        self._scopes.pop().__exit__(*exc)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


amp_guard = auto_cast


def is_float16_supported(device=None):
    """True: float16 ops run everywhere (oneDNN has no float16 CPU kernels, so they compute in
    float32 and round; docs/kernels.md, "Low precision")."""
    return True


def is_bfloat16_supported(device=None):
    """True: bfloat16 ops run everywhere; natively where oneDNN has bfloat16 kernels (AVX-512),
    through float32 elsewhere."""
    return True


def _norm_layer(layer):
    names = ("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "SyncBatchNorm", "LayerNorm")
    return type(layer).__name__ in names


def _cast_model(model, dtype):
    """Casts the floating parameters of every layer except the norm layers (Paddle keeps
    BatchNorm and LayerNorm in float32 under O2) to `dtype`, in place."""
    for layer in model.sublayers(include_self=True):
        if _norm_layer(layer):
            continue
        for p in layer.parameters(include_sublayers=False):
            if p.dtype == _C.dtype.float32:
                _C._convert_tensor_(p, dtype)


def decorate(models, optimizers=None, level="O1", dtype="float16", master_weight=None, save_dtype=None):
    """decorate(models, optimizers=None, level='O1', dtype='float16', master_weight=None,
    save_dtype=None): for level O2, casts each model's parameters (but those of its norm layers)
    to `dtype` in place, and makes each optimizer keep float32 master weights of them
    (master_weight None or True: persistent master copies, saved in its state_dict; False:
    the update still runs in float32 on a copy rounded back each step). save_dtype: the dtype
    of the model's state_dict (float16, bfloat16, float32 or float64). O1 returns them as they
    are. Returns (models, optimizers) as given (a layer or a list), or models alone."""
    _check_level(level, "decorate", ("O1", "O2"))
    name = _check_dtype(dtype, "decorate")
    if save_dtype is not None and _dtype_name(save_dtype) not in (
            "float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"decorate(): save_dtype must be float16, bfloat16, float32 or float64, got {save_dtype!r}")
    model_list = models if isinstance(models, (list, tuple)) else [models]
    opt_list = [] if optimizers is None else (
        optimizers if isinstance(optimizers, (list, tuple)) else [optimizers])
    if level == "O2":
        low = getattr(_C.dtype, name)
        for m in model_list:
            _cast_model(m, low)
        for o in opt_list:
            o._set_multi_precision(master_weight is None or bool(master_weight))
    if save_dtype is not None:
        target = _dtype_name(save_dtype)
        for m in model_list:
            _set_save_dtype(m, target)
    if optimizers is None:
        return models
    return models, optimizers


def _set_save_dtype(model, dtype):
    """Makes model.state_dict() return floating tensors converted to `dtype`."""
    original = model.state_dict

    def state_dict(*args, **kwargs):
        sd = original(*args, **kwargs)
        for k, v in list(sd.items()):
            if hasattr(v, "astype") and _dtype_name(v.dtype) in ("float32", "float64", "float16", "bfloat16"):
                sd[k] = v.astype(dtype)
        return sd

    model.state_dict = state_dict
