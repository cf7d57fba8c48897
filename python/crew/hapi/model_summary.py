"""paddle.summary: runs the network once on zeros and prints Paddle 2.4's table.

    ---------------------------------------------------------------------------
     Layer (type)       Input Shape          Output Shape         Param #
    ===========================================================================
       Conv2D-1       [[1, 1, 28, 28]]      [1, 6, 28, 28]          60
    ...
    Total params: 61,610

A row per layer that ran, in the order their forward ended, except containers
(Sequential) and the network itself (unless it has no sub-layers). Names count per class
within one summary (Conv2D-1, Conv2D-2, ...).
"""
import collections
import numbers

import numpy as np

from .. import _C


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(isinstance(i, numbers.Integral) or i is None for i in x)


def _make_inputs(input_size, dtypes):
    """input_size: a shape, a list of shapes, or an InputSpec (or a list); None/-1 dims -> 1."""
    if hasattr(input_size, "shape") and not isinstance(input_size, (list, tuple, _C.Tensor)):
        input_size = tuple(input_size.shape)
    sizes = [input_size] if _is_shape(input_size) else [
        tuple(s.shape) if hasattr(s, "shape") and not _is_shape(s) else s for s in input_size]
    if dtypes is None:
        dtypes = ["float32"] * len(sizes)
    elif isinstance(dtypes, str):
        dtypes = [dtypes] * len(sizes)
    inputs = []
    for shape, dt in zip(sizes, dtypes):
        shape = [1 if (d is None or d == -1) else int(d) for d in shape]
        np_dtype = np.dtype(str(dt).replace("crew.", "").replace("paddle.", ""))
        inputs.append(_C.to_tensor(np.zeros(shape, dtype=np_dtype)))
    return inputs, sizes


def _shape_of(out):
    if isinstance(out, _C.Tensor):
        return list(out.shape)
    if isinstance(out, (list, tuple)):
        shapes = [_shape_of(o) for o in out]
        return shapes[0] if len(shapes) == 1 else shapes
    return []


def _numel(shape):
    if shape and isinstance(shape[0], list):
        return sum(_numel(s) for s in shape)
    return int(np.prod(shape)) if shape else 0


def _record(net, inputs):
    from ..nn.layers import Sequential
    rows = collections.OrderedDict()
    counts = collections.Counter()
    wrapped = []
    depth = len(net.sublayers())

    def wrap(layer):
        inner = layer.forward

        def forward(*args, **kwargs):
            out = inner(*args, **kwargs)
            name = type(layer).__name__
            counts[name] += 1
            params = [p for p in layer._parameters.values()]
            rows[f"{name}-{counts[name]}"] = {
                "input_shape": [list(a.shape) for a in args if isinstance(a, _C.Tensor)],
                "output_shape": _shape_of(out),
                "nb_params": sum(int(np.prod(p.shape)) for p in params),
                "trainable_params": sum(int(np.prod(p.shape)) for p in params if not p.stop_gradient),
            }
            return out
        object.__setattr__(layer, "forward", forward)
        wrapped.append(layer)

    for layer in net.sublayers(include_self=True):
        if not isinstance(layer, Sequential) and (layer is not net or depth < 1):
            wrap(layer)
    training = net.training
    net.eval()
    try:
        with _NoGrad():
            net(*inputs)
    finally:
        for layer in wrapped:
            layer.__dict__.pop("forward", None)
        if training:
            net.train()
    return rows


class _NoGrad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C.set_grad_enabled(False)

    def __exit__(self, *exc):
        _C.set_grad_enabled(self._prev)


def _table(rows, sizes):
    w = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for name, r in rows.items():
        w["layer"] = max(w["layer"], len(name))
        w["input"] = max(w["input"], len(str(r["input_shape"])))
        w["output"] = max(w["output"], len(str(r["output_shape"])))
        w["params"] = max(w["params"], len(str(r["nb_params"])))
    width = max(75, sum(w.values()) + 5)
    line = "{:^{}} {:^{}} {:^{}} {:^{}}"
    out = ["-" * width, line.format("Layer (type)", w["layer"], "Input Shape", w["input"], "Output Shape",
                                    w["output"], "Param #", w["params"]), "=" * width]
    total = trainable = total_output = 0
    for name, r in rows.items():
        out.append(line.format(name, w["layer"], str(r["input_shape"]), w["input"], str(r["output_shape"]),
                               w["output"], f"{r['nb_params']:,}", w["params"]))
        total += r["nb_params"]
        trainable += r["trainable_params"]
        total_output += _numel(r["output_shape"])
    input_mb = sum(_numel([abs(d) if d else 1 for d in s]) for s in sizes) * 4.0 / 1024 ** 2
    output_mb = 2.0 * total_output * 4.0 / 1024 ** 2  # x2 for gradients
    params_mb = total * 4.0 / 1024 ** 2
    out += ["=" * width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}", "-" * width,
            f"Input size (MB): {input_mb:.2f}", f"Forward/backward pass size (MB): {output_mb:.2f}",
            f"Params size (MB): {params_mb:.2f}", f"Estimated Total Size (MB): {input_mb + output_mb + params_mb:.2f}",
            "-" * width]
    return "\n".join(out) + "\n", {"total_params": total, "trainable_params": trainable}


def summary(net, input_size=None, dtypes=None, input=None):
    """Prints the table of net run on zeros of input_size (or on `input`); returns
    {'total_params': n, 'trainable_params': m}."""
    from ..nn.layer import Layer
    if not isinstance(net, Layer):
        raise TypeError(f"summary: net must be a crew.nn.Layer, got {type(net).__name__}")
    if input is not None:
        inputs = list(input) if isinstance(input, (list, tuple)) else [input]
        sizes = [list(t.shape) for t in inputs]
    elif input_size is not None:
        inputs, sizes = _make_inputs(input_size, dtypes)
    else:
        raise ValueError("summary: give input_size (a shape or a list of shapes) or input (tensors)")
    text, params = _table(_record(net, inputs), sizes)
    print(text)
    return params
