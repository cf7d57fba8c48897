"""paddle.grad (issue 30): the gradients of outputs with respect to inputs, computed by crew's
backward engine in one pass (crew/autograd/engine.h, partial_grad) without touching any
leaf's .grad and without firing DataParallel's gradient-ready hooks."""
from . import _C

Tensor = _C.Tensor


def _tensors(value, arg, allow_none=False):
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for i, v in enumerate(items):
        if not isinstance(v, Tensor) and not (allow_none and v is None):
            raise TypeError(f"grad(): argument '{arg}' must hold crew.Tensors, entry {i} is {type(v).__name__}")
    return items


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, no_grad_vars=None):
    """Paddle's grad: a list with d(sum of outputs * grad_outputs)/d input for each of inputs
    (grad_outputs None, or a None entry: ones). The graph is freed unless retain_graph (default:
    create_graph). An input the outputs do not depend on is a ValueError, or None with
    allow_unused. no_grad_vars: tensors the gradient does not flow through. create_graph=True
    (gradients that are themselves differentiable) is not supported: crew's backward functions
    record no graph, so it is a NotImplementedError rather than a silent constant."""
    if create_graph:
        raise NotImplementedError("grad: create_graph=True (higher-order gradients) is not supported by crew")
    if not only_inputs:
        raise ValueError("grad: only_inputs=False is not supported (as in Paddle 2.4)")
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    seeds = [None] * len(outs) if grad_outputs is None else _tensors(grad_outputs, "grad_outputs", True)
    if len(seeds) != len(outs):
        raise ValueError(f"grad: {len(outs)} outputs but {len(seeds)} grad_outputs")
    seeds = [_C.full(list(o.shape), 1.0, o.dtype) if g is None else g for o, g in zip(outs, seeds)]
    blocked = [] if no_grad_vars is None else _tensors(no_grad_vars, "no_grad_vars")
    keep = bool(create_graph) if retain_graph is None else bool(retain_graph)
    result = _C._partial_grad(outs, seeds, ins, blocked, keep)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise ValueError(f"grad: input {i} (shape {list(ins[i].shape)}) does not appear in the backward "
                             "graph of the outputs; set allow_unused=True to get None for it")
    return result
