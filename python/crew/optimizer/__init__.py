"""crew.optimizer: Paddle's paddle.optimizer (SGD, Momentum, Adam, AdamW, RMSProp, Adagrad,
Adadelta, Adamax, Lamb) in C++.

    sched = crew.optimizer.lr.StepDecay(learning_rate=0.1, step_size=30)
    opt = crew.optimizer.Momentum(learning_rate=sched, parameters=model.parameters(),
                                  grad_clip=crew.nn.ClipGradByGlobalNorm(1.0))
    loss.backward(); opt.step(); opt.clear_grad()
    sched.step()   # once per epoch (or per step, as the schedule is meant)

learning_rate is a float or a crew.optimizer.lr schedule, which the optimizer reads at
every step(). weight_decay is a float, L2Decay or L1Decay (crew.regularizer); parameters
built with ParamAttr(learning_rate=..., regularizer=...) get Paddle's per-parameter rules
(optimizer/param_rules.py).
"""
from .._C import optimizer as _o
from .._C.optimizer import Optimizer  # noqa: F401
from . import lr  # noqa: F401
from .param_rules import RuledOptimizer, build as _build

_ADAM_ARGS = ("learning_rate", "beta1", "beta2", "epsilon", "parameters", "weight_decay", "grad_clip")


def SGD(*args, **kwargs):
    """SGD(learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None, name=None)"""
    kwargs.pop("name", None)
    return _build(_o.SGD, "SGD", args, kwargs, ("learning_rate", "parameters", "weight_decay", "grad_clip"))


def Momentum(*args, **kwargs):
    """Momentum(learning_rate=0.001, momentum=0.9, parameters=None, use_nesterov=False,
    weight_decay=None, grad_clip=None, name=None)"""
    for k in ("name", "multi_precision", "rescale_grad"):
        kwargs.pop(k, None)
    return _build(_o.Momentum, "Momentum", args, kwargs,
                  ("learning_rate", "momentum", "parameters", "use_nesterov", "weight_decay", "grad_clip"))


def Adam(*args, **kwargs):
    """Adam(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
    weight_decay=None, grad_clip=None, name=None)"""
    for k in ("name", "lazy_mode", "multi_precision"):
        kwargs.pop(k, None)
    return _build(_o.Adam, "Adam", args, kwargs, _ADAM_ARGS)


def AdamW(*args, **kwargs):
    """AdamW(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
    weight_decay=0.01, grad_clip=None, name=None)"""
    for k in ("name", "lazy_mode", "multi_precision"):
        kwargs.pop(k, None)
    return _build(_o.AdamW, "AdamW", args, kwargs, _ADAM_ARGS,
                  default_decay=0.01)


def _keywords(name, args, kwargs, arg_names, ignored, required=()):
    """Paddle's positional arguments as keywords (TypeError as Python's for too many, a
    repeated or a missing required one), without the `ignored` ones crew accepts and does not use."""
    if len(args) > len(arg_names):
        raise TypeError(f"{name}() takes at most {len(arg_names)} arguments ({len(args)} given)")
    named = dict(zip(arg_names, args))
    for k in set(named) & set(kwargs):
        raise TypeError(f"{name}() got multiple values for argument '{k}'")
    named.update(kwargs)
    for k in required:
        if k not in named:
            raise TypeError(f"{name}() missing 1 required positional argument: '{k}'")
    for k in ignored:
        named.pop(k, None)
    return named


def RMSProp(*args, **kwargs):
    """RMSProp(learning_rate, rho=0.95, epsilon=1e-06, momentum=0.0, centered=False,
    parameters=None, weight_decay=None, grad_clip=None, name=None)"""
    names = ("learning_rate", "rho", "epsilon", "momentum", "centered", "parameters", "weight_decay", "grad_clip",
             "name")
    return _build(_o.RMSProp, "RMSProp", (), _keywords("RMSProp", args, kwargs, names, ("name",), ("learning_rate",)), ())


def Adagrad(*args, **kwargs):
    """Adagrad(learning_rate, epsilon=1e-06, parameters=None, weight_decay=None, grad_clip=None,
    name=None, initial_accumulator_value=0.0)"""
    names = ("learning_rate", "epsilon", "parameters", "weight_decay", "grad_clip", "name",
             "initial_accumulator_value")
    return _build(_o.Adagrad, "Adagrad", (), _keywords("Adagrad", args, kwargs, names, ("name",), ("learning_rate",)), ())


def Adadelta(*args, **kwargs):
    """Adadelta(learning_rate=0.001, epsilon=1e-06, rho=0.95, parameters=None, weight_decay=None,
    grad_clip=None, name=None). As in Paddle 2.4, the update does not use learning_rate."""
    names = ("learning_rate", "epsilon", "rho", "parameters", "weight_decay", "grad_clip", "name")
    return _build(_o.Adadelta, "Adadelta", (), _keywords("Adadelta", args, kwargs, names, ("name",)), (),
                  scale_lr=False)


def Adamax(*args, **kwargs):
    """Adamax(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, parameters=None,
    weight_decay=None, grad_clip=None, name=None)"""
    names = _ADAM_ARGS + ("name",)
    return _build(_o.Adamax, "Adamax", (), _keywords("Adamax", args, kwargs, names, ("name",)), ())


def Lamb(*args, **kwargs):
    """Lamb(learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999, epsilon=1e-06,
    parameters=None, grad_clip=None, exclude_from_weight_decay_fn=None, multi_precision=False,
    name=None). exclude_from_weight_decay_fn(param) -> True: no lamb_weight_decay for param."""
    names = ("learning_rate", "lamb_weight_decay", "beta1", "beta2", "epsilon", "parameters", "grad_clip",
             "exclude_from_weight_decay_fn", "multi_precision", "name")
    named = _keywords("Lamb", args, kwargs, names, ("name", "multi_precision"))
    exclude = named.pop("exclude_from_weight_decay_fn", None)
    if exclude is not None and not callable(exclude):
        raise TypeError("Lamb(): argument 'exclude_from_weight_decay_fn' must be a callable or None, got "
                        f"{type(exclude).__name__}")

    def ask_exclude(named):
        if exclude is None:
            return
        try:
            named["exclude_from_weight_decay"] = [bool(exclude(p)) for p in named["parameters"]]
        except AttributeError as e:
            if "name" not in str(e):
                raise
            raise AttributeError(f"Lamb(): exclude_from_weight_decay_fn failed: {e}; crew parameters have a "
                                 "name when created with ParamAttr(name=...)") from e

    return _build(_o.Lamb, "Lamb", (), named, (), decay_arg=False, prepare=ask_exclude)


__all__ = ["SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad", "Adadelta", "Adamax", "Lamb", "Optimizer",
           "RuledOptimizer", "lr"]
