"""crew.optimizer: Paddle's paddle.optimizer (SGD, Momentum, Adam, AdamW) in C++.

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


__all__ = ["SGD", "Momentum", "Adam", "AdamW", "Optimizer", "RuledOptimizer", "lr"]
