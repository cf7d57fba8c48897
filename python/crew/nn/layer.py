"""crew.nn.Layer: Paddle's nn.Layer, in Python, over crew's C++ layers.

A subclass assigns sub-layers and parameters in __init__ and writes forward in Python, as
the seed's MyNet does; the built-in layers (Conv2D, Linear, ...) are C++ layers
(crew._C.nn) wrapped so that their parameters are the C++ tensors themselves. Registration
rule: an attribute that is a Layer is a sub-layer; a Tensor with stop_gradient=False (what
create_parameter makes) is a parameter; register_buffer adds state.
"""
import collections

import numpy as np

from .. import _C
from ..default_dtype import FLOATING, convert_layer, default_float

Tensor = _C.Tensor


class Layer:
    def __init__(self, name_scope=None, dtype="float32"):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_sub_layers", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_name_scope", name_scope or type(self).__name__.lower())

    def _check_init(self):
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before assigning "
                               "sub-layers or parameters")

    def __setattr__(self, name, value):
        if isinstance(value, Layer) or (isinstance(value, Tensor) and not value.stop_gradient):
            self._check_init()
            for d in (self._parameters, self._sub_layers, self._buffers):
                d.pop(name, None)
            self.__dict__.pop(name, None)
            (self._sub_layers if isinstance(value, Layer) else self._parameters)[name] = value
            if isinstance(value, Tensor):
                value.persistable = True  # a parameter is saved with the model, as Paddle's
        elif "_parameters" in self.__dict__ and (name in self._parameters or name in self._sub_layers):
            if value is not None:
                raise TypeError(f"{type(self).__name__}.{name}: cannot replace a registered "
                                f"parameter or sub-layer by a {type(value).__name__}")
            self._parameters.pop(name, None)
            self._sub_layers.pop(name, None)
        elif "_buffers" in self.__dict__ and name in self._buffers:
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_sub_layers", "_buffers"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for d in (self._parameters, self._sub_layers, self._buffers):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    # ---- building ----
    def forward(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} defines no forward()")

    def __call__(self, *inputs, **kwargs):
        return self.forward(*inputs, **kwargs)

    def add_sublayer(self, name, sublayer):
        setattr(self, name, sublayer)
        return sublayer

    def add_parameter(self, name, parameter):
        if parameter.stop_gradient:
            parameter.stop_gradient = False
        setattr(self, name, parameter)
        return parameter

    def register_buffer(self, name, tensor, persistable=True):
        self._check_init()
        self._buffers[name] = tensor
        if isinstance(tensor, Tensor):
            tensor.persistable = bool(persistable)
        if not persistable:
            self.__dict__.setdefault("_non_persistable", set()).add(name)

    def create_parameter(self, shape, attr=None, dtype=None, is_bias=False, default_initializer=None):
        """A new trainable tensor (Paddle's argument order): see create_parameter below."""
        return create_parameter(shape, dtype, attr=attr, is_bias=is_bias, default_initializer=default_initializer)

    # ---- traversal (registration order, pre-order, as Paddle) ----
    def named_parameters(self, prefix="", include_sublayers=True):
        seen = set()
        for layer_prefix, layer in self._walk(prefix, include_sublayers):
            for name, p in layer._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (layer_prefix + name, p)

    def parameters(self, include_sublayers=True):
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix="", include_sublayers=True):
        for layer_prefix, layer in self._walk(prefix, include_sublayers):
            for name, b in layer._buffers.items():
                yield (layer_prefix + name, b)

    def buffers(self, include_sublayers=True):
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def children(self):
        return list(self._sub_layers.values())

    def named_children(self):
        return list(self._sub_layers.items())

    def named_sublayers(self, prefix="", include_self=False):
        for p, layer in self._walk(prefix, True):
            if layer is not self or include_self:
                yield (p[:-1], layer)

    def sublayers(self, include_self=False):
        return [l for _, l in self.named_sublayers(include_self=include_self)]

    def _walk(self, prefix, include_sublayers):
        start = prefix + "." if prefix else ""
        yield (start, self)
        if include_sublayers:
            for name, sub in self._sub_layers.items():
                yield from sub._walk(start + name, True)

    def apply(self, fn):
        for sub in self._sub_layers.values():
            sub.apply(fn)
        fn(self)
        return self

    def to(self, device=None, dtype=None, blocking=None):
        """Moves parameters and buffers to `device` ('cpu', 'gpu:0', a Place) and converts the
        floating-point ones to `dtype`, in place (optimizers keep their references); gradients
        are dropped. `blocking` is accepted for Paddle's signature: copies always complete."""
        tensors = list(self.parameters()) + list(self.buffers())
        if device is not None:
            for t in tensors:
                _C._move_tensor_(t, device)
        if dtype is not None:
            want = _C.dtype.__members__.get(dtype) if isinstance(dtype, str) else dtype
            if want not in FLOATING:
                raise ValueError(f"Layer.to: dtype must be a floating-point type, got {dtype}")
            for t in tensors:
                if t.dtype in FLOATING and t.dtype != want:
                    _C._convert_tensor_(t, want)
        return self

    # ---- mode ----
    def train(self):
        for _, layer in self._walk("", True):
            object.__setattr__(layer, "training", True)
            layer._set_mode(True)
        return self

    def eval(self):
        for _, layer in self._walk("", True):
            object.__setattr__(layer, "training", False)
            layer._set_mode(False)
        return self

    def _set_mode(self, training):
        pass

    # ---- state ----
    def state_dict(self):
        # Every name a parameter is registered under, as Paddle's: a tensor held by two layers
        # (an RNN's weight_ih_l0 and 0.cell.weight_ih) has two keys; parameters() lists it once.
        out = collections.OrderedDict()
        for layer_prefix, layer in self._walk("", True):
            for name, p in layer._parameters.items():
                if p is not None:
                    out[layer_prefix + name] = p
        for layer_prefix, layer in self._walk("", True):
            skip = layer.__dict__.get("_non_persistable", set())
            for name, b in layer._buffers.items():
                if name not in skip and isinstance(b, Tensor):
                    out[layer_prefix + name] = b
        return out

    def set_state_dict(self, state_dict, use_structured_name=True, strict=True):
        """Copies values into the existing tensors (optimizers keep their references).
        Checks every shape first: nothing is copied when one is wrong. Returns
        (missing_keys, unexpected_keys)."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise ValueError(f"set_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        values = {}
        for k, t in own.items():
            if k not in state_dict:
                continue
            src = state_dict[k]
            if not isinstance(src, Tensor):
                src = np.asarray(src)
            if list(src.shape) != list(t.shape):
                raise ValueError(f"set_state_dict: '{k}' has shape {list(src.shape)} in the state "
                                 f"dict but {list(t.shape)} in the layer")
            values[k] = src
        # Copied in C++, converted to each tensor's dtype: numpy() of a bfloat16 or device
        # tensor is a copy, so writing into it would change nothing.
        for k, src in values.items():
            if not isinstance(src, Tensor):
                src = _C.to_tensor(np.ascontiguousarray(src), dtype=own[k].dtype)
            _C._copy_tensor_(own[k], src)
        return missing, unexpected

    load_dict = set_state_dict
    set_dict = set_state_dict

    def clear_gradients(self, set_to_zero=True):
        for p in self.parameters():
            p.clear_grad(set_to_zero)

    def full_name(self):
        return self._name_scope

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, sub in self._sub_layers.items():
            body = repr(sub).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + ")" if len(lines) > 1 else f"{type(self).__name__}()"


def create_parameter(shape, dtype=None, name=None, attr=None, is_bias=False, default_initializer=None):
    """Paddle's paddle.create_parameter (and Layer.create_parameter): a new trainable tensor in
    dtype (set_default_dtype's when None). Values: attr's initializer, else default_initializer
    (an nn.initializer, or a function shape -> array), else zeros for a bias and Xavier-uniform
    otherwise (Paddle's defaults). attr: a ParamAttr, a name, an initializer, or False (returns
    None, Paddle's "no parameter")."""
    from ..param_attr import ParamAttr, apply_attr
    from .initializer import Constant, Initializer, XavierUniform
    if attr is False:
        return None
    shape = [int(s) for s in shape]
    init = default_initializer or (Constant(0.0) if is_bias else XavierUniform())
    value = init.value(shape) if isinstance(init, Initializer) else init(shape)
    dtype = default_float() if dtype is None else dtype
    param = _C.to_tensor(np.asarray(value, dtype=np.float32), dtype=dtype, stop_gradient=False)
    param.persistable = True
    if name is not None and attr is None:
        attr = name
    return apply_attr(param, ParamAttr._to_attr(attr))


class CppLayer(Layer):
    """A C++ layer (crew._C.nn) seen as a Python Layer: its parameters and buffers are the
    C++ tensors, forward runs in C++ without the GIL."""

    _norm = False  # a norm layer: its dtype is norm_dtype() (float32 under a 16-bit default)

    def __init__(self, impl):
        super().__init__(impl.full_name)
        object.__setattr__(self, "_impl", impl)
        for name, p in impl.named_parameters():
            self._parameters[name] = p
            p.persistable = True
        for name, b in impl.named_buffers():
            self._buffers[name] = b
            b.persistable = True
        convert_layer(self, norm=self._norm)  # built in float32 in C++: set_default_dtype applies

    def forward(self, x):
        return self._impl(x)

    def _set_mode(self, training):
        if training:
            self._impl.train()
        else:
            self._impl.eval()
