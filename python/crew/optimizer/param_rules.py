"""Paddle's per-parameter rules around crew's C++ optimizers: ParamAttr(learning_rate=...)
multipliers, ParamAttr(regularizer=...) and weight_decay given as L1Decay/L2Decay.

The update itself stays in C++ (crew::optim). Paddle's order is kept: the gradients are
clipped (grad_clip, skipping need_clip=False parameters), then regularized, then the
optimizer updates. A parameter's own regularizer replaces the optimizer's weight_decay for
it: the C++ optimizer adds weight_decay * p to every gradient (SGD, Momentum, Adam, RMSProp,
Adagrad, Adadelta, Adamax), so that term is subtracted first. A learning-rate multiplier m
scales the whole update of its parameter (p_new = p_old + m * (p_C++ - p_old)), which is exact
for these optimizers because their update is linear in the learning rate (RMSProp's momentum
then holds 1/m of Paddle's, and the parameters follow Paddle's exactly). Adadelta's update does
not use the rate in Paddle 2.4, so multipliers leave it alone.
"""
from .. import _C
from ..regularizer import L1Decay, L2Decay, WeightDecayRegularizer

_o = _C.optimizer


def _lr_mult(p):
    attr = getattr(p, "optimize_attr", None)
    return float(attr.get("learning_rate", 1.0)) if attr else 1.0


def _needs_rules(params, weight_decay):
    if isinstance(weight_decay, WeightDecayRegularizer):
        return True
    return any(_lr_mult(p) != 1.0 or getattr(p, "regularizer", None) is not None for p in params)


class RuledOptimizer:
    """A C++ optimizer (`core`) with Paddle's per-parameter rules applied around step()."""

    def __init__(self, core, params, weight_decay, coupled_l2, grad_clip, scale_lr=True):
        self._core = core
        self._scale_lr = scale_lr
        self._params = params
        self._clip = grad_clip
        # An L2Decay weight_decay became the C++ optimizer's weight_decay; L1 is applied here.
        self._global_reg = weight_decay if isinstance(weight_decay, L1Decay) else None
        self._coupled_l2 = coupled_l2  # what the C++ optimizer adds as weight_decay * p

    def _grads(self):
        return [(p, p.grad) for p in self._params if p.grad is not None]

    def _regularize(self, with_grads):
        for p, g in with_grads:
            own = getattr(p, "regularizer", None)
            reg = own if own is not None else self._global_reg
            if reg is None:
                continue
            value, grad = p.numpy(), g.numpy()
            term = reg.grad_term(value)
            if own is not None and self._coupled_l2:
                term = term - self._coupled_l2 * value
            grad += term.astype(grad.dtype, copy=False)

    def step(self):
        with_grads = self._grads()
        if self._clip is not None:
            clipped = [p for p, _ in with_grads if getattr(p, "need_clip", True)]
            if clipped:
                self._clip(clipped)
        self._regularize(with_grads)
        scaled = [(p, _lr_mult(p), p.numpy().copy()) for p, _ in with_grads
                  if self._scale_lr and _lr_mult(p) != 1.0]
        self._core.step()
        for p, mult, old in scaled:
            new = p.numpy()
            new[...] = old + mult * (new - old)

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        self.step()

    def __getattr__(self, name):
        return getattr(self.__dict__["_core"], name)


def _split_decay(weight_decay):
    """(float for the C++ optimizer, the decay object or None)."""
    if weight_decay is None:
        return 0.0, None
    if isinstance(weight_decay, L2Decay):
        return weight_decay.coeff, None
    if isinstance(weight_decay, L1Decay):
        return 0.0, weight_decay
    return weight_decay, None


def _flatten_groups(params, name):
    """Paddle's parameter groups ([{'params': [...], 'learning_rate': m, 'weight_decay': d}, ...]):
    a group's learning_rate multiplies the optimizer's for its parameters (as Paddle sets
    optimize_attr['learning_rate']), its weight_decay (a float: L2Decay, or a regularizer)
    becomes their regularizer. Returns the parameters, flattened."""
    if not any(isinstance(g, dict) for g in params):
        return params
    flat = []
    for i, group in enumerate(params):
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{name}(): parameters mixes groups and tensors; entry {i} is a "
                            f"{type(group).__name__}: give every entry as a dict with 'params'")
        unknown = sorted(set(group) - {"params", "learning_rate", "weight_decay"})
        if unknown:
            raise ValueError(f"{name}(): parameter group {i} sets {unknown}; crew's groups take "
                             "'params', 'learning_rate' and 'weight_decay'")
        if "weight_decay" in group and name == "AdamW":
            raise ValueError("AdamW(): a parameter group's weight_decay is not supported in crew "
                             "(AdamW's decay is decoupled); give it to AdamW itself")
        for p in group["params"]:
            if "learning_rate" in group:
                p.optimize_attr = dict(getattr(p, "optimize_attr", None) or {},
                                       learning_rate=float(group["learning_rate"]))
            if "weight_decay" in group:
                wd = group["weight_decay"]
                p.regularizer = wd if isinstance(wd, WeightDecayRegularizer) else L2Decay(float(wd))
            flat.append(p)
    return flat


def build(factory, name, args, kwargs, arg_names, default_decay=0.0, decay_arg=True, prepare=None,
          scale_lr=True):
    """Calls crew._C.optimizer.<name> (`factory`), adding the rules when a parameter or
    weight_decay needs them. `arg_names`: Paddle's positional argument names. decay_arg: the
    optimizer takes weight_decay (Lamb does not); prepare(named): adds arguments computed from
    the flattened parameters; scale_lr: apply learning-rate multipliers (not for Adadelta)."""
    if len(args) > len(arg_names):
        return factory(*args, **kwargs)  # crew._C's TypeError names the extra argument
    named = dict(zip(arg_names, args))
    if set(named) & set(kwargs):
        return factory(*args, **kwargs)
    named.update(kwargs)
    params = named.get("parameters")
    if params is None or isinstance(params, (_C.Tensor, str, bytes)) or not hasattr(params, "__iter__"):
        return factory(**named)
    params = _flatten_groups(list(params), name)
    named["parameters"] = params
    if prepare is not None:
        prepare(named)
    weight_decay = named.get("weight_decay")
    if weight_decay is None and decay_arg:
        named["weight_decay"] = default_decay
    if not all(isinstance(p, _C.Tensor) for p in params) or not _needs_rules(params, weight_decay):
        return factory(**named)
    grad_clip = named.pop("grad_clip", None)
    if decay_arg:
        named["weight_decay"] = _split_decay(weight_decay)[0]
    core = factory(**named)
    coupled = 0.0 if name == "AdamW" or not decay_arg else float(named["weight_decay"])
    return RuledOptimizer(core, params, weight_decay, coupled, grad_clip, scale_lr=scale_lr)
