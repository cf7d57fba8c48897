"""Paddle 2.4's loss functions (paddle.nn.functional.*_loss) with their options.

Each composes crew's differentiable C++ ops (log_softmax, log, exp, relu, mul, sum, ...), so
the gradients are autograd's; labels, class weights and masks are constants (NumPy). The
default cross_entropy (hard labels, no weight, ignore_index -100, softmax over the last axis)
runs crew's fused C++ kernel. Scalar results have shape [1], as Paddle 2.4's.
"""
import numpy as np

from .. import _C

_f = _C.nn.functional
_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op, reduction, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction='{reduction}': expected one of {', '.join(map(repr, allowed))}")


def _tensor(x, op, arg):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"{op}: {arg} must be a crew.Tensor, got {type(x).__name__}")
    return x


def _const(array, like):
    """A constant (no gradient) of like's dtype."""
    return _C.to_tensor(np.ascontiguousarray(array), dtype=like.dtype)


def _optional(x, op, arg):
    return None if x is None else _tensor(x, op, arg)


def _np(x):
    return x.numpy() if isinstance(x, _C.Tensor) else np.asarray(x)


def _reduce(loss, reduction):
    if reduction == "mean":
        return _C.reshape(_C.mean(loss), [1])
    if reduction == "sum":
        return _C.reshape(_C.sum(loss), [1])
    return loss


def _abs(x):
    return _f.relu(x) + _f.relu(-x)


def _check_same_shape(op, input, label):
    if list(input.shape) != list(label.shape):
        raise ValueError(f"{op}: input of shape {list(input.shape)} and label of shape "
                         f"{list(label.shape)} must have the same shape")


def _move_axis_last(x, axis):
    if axis == x.dim() - 1:
        return x
    perm = [i for i in range(x.dim()) if i != axis] + [axis]
    return _C.transpose(x, perm)


# ---- regression ----
def mse_loss(input, label, reduction="mean", name=None):
    _check_reduction("mse_loss", reduction)
    return _f.mse_loss(_tensor(input, "mse_loss", "input"), _tensor(label, "mse_loss", "label"), reduction)


def l1_loss(input, label, reduction="mean", name=None):
    """|input - label|, reduced."""
    _check_reduction("l1_loss", reduction)
    return _reduce(_abs(_tensor(input, "l1_loss", "input") - _tensor(label, "l1_loss", "label")), reduction)


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, name=None):
    """Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); d = input - label."""
    _check_reduction("smooth_l1_loss", reduction)
    a = _abs(_tensor(input, "smooth_l1_loss", "input") - _tensor(label, "smooth_l1_loss", "label"))
    m = a - _f.relu(a + (-float(delta)))          # min(|d|, delta)
    return _reduce(m * m * 0.5 + (a - m) * float(delta), reduction)


# ---- binary ----
def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):
    """-weight (label log(input) + (1 - label) log(1 - input)), each log clamped at -100 (Paddle)."""
    _check_reduction("binary_cross_entropy", reduction)
    _tensor(input, "binary_cross_entropy", "input")
    _tensor(label, "binary_cross_entropy", "label")
    _optional(weight, "binary_cross_entropy", "weight")
    _check_same_shape("binary_cross_entropy", input, label)
    p = _np(input)
    if p.size and (np.nanmin(p) < 0 or np.nanmax(p) > 1):
        raise ValueError("binary_cross_entropy: input must lie in [0, 1] (the output of a sigmoid), "
                         f"got values in [{np.nanmin(p)}, {np.nanmax(p)}]")
    log_p = _f.relu(_C.log(input) + 100.0) + (-100.0)
    log_q = _f.relu(_C.log(1.0 - input) + 100.0) + (-100.0)
    out = -(label * log_p + (1.0 - label) * log_q)
    if weight is not None:
        out = out * weight
    return _reduce(out, reduction)


def _softplus_neg_abs(x):
    """log(1 + exp(-|x|)): finite for every x."""
    return _C.log(_C.exp(-_abs(x)) + 1.0)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean", pos_weight=None, name=None):
    """max(x, 0) - x label + log(1 + exp(-|x|)), times (pos_weight - 1) label + 1 and weight."""
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    for arg, x in (("logit", logit), ("label", label)):
        _tensor(x, "binary_cross_entropy_with_logits", arg)
    _optional(weight, "binary_cross_entropy_with_logits", "weight")
    _optional(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    _check_same_shape("binary_cross_entropy_with_logits", logit, label)
    out = _f.relu(logit) - logit * label + _softplus_neg_abs(logit)
    if pos_weight is not None:
        out = out * ((pos_weight + (-1.0)) * label + 1.0)
    if weight is not None:
        out = out * weight
    return _reduce(out, reduction)


# ---- classification ----
def _hard_labels(op, label, rows_shape, classes, ignore_index):
    """label int [rows] or [rows, 1] -> (int64 array of rows_shape, bool mask of counted rows)."""
    lab = _np(label)
    if lab.dtype.kind not in "iu":
        raise TypeError(f"{op}: label must be an integer tensor (int64), got {lab.dtype}")
    if list(lab.shape) == list(rows_shape) + [1]:
        lab = lab.reshape(rows_shape)
    if list(lab.shape) != list(rows_shape):
        raise ValueError(f"{op}: label of shape {list(_np(label).shape)} does not match the input "
                         f"(expected {list(rows_shape)} or {list(rows_shape) + [1]})")
    lab = lab.astype(np.int64)
    mask = lab != ignore_index
    bad = mask & ((lab < 0) | (lab >= classes))
    if bad.any():
        raise IndexError(f"{op}: label {int(lab[bad].flat[0])} is outside [0, {classes}) "
                         f"(ignore_index={ignore_index})")
    return np.where(mask, lab, 0), mask


def _class_weight(op, weight, classes):
    if weight is None:
        return None
    w = _np(weight).astype(np.float64)
    if w.shape != (classes,):
        raise ValueError(f"{op}: weight of shape {list(w.shape)}: expected [{classes}] (one per class)")
    return w


def _pick(op, logp, label, weight, ignore_index, reduction, from_probs=False):
    """logp [..., C] (log-probabilities, or probabilities when from_probs) and hard labels ->
    per-row -w[label] logp[label] (0 where ignored), reduced with Paddle's weighted mean."""
    classes = logp.shape[-1]
    rows_shape = list(logp.shape[:-1])
    lab, mask = _hard_labels(op, label, rows_shape, classes, ignore_index)
    onehot = np.eye(classes, dtype=np.float64)[lab] * mask[..., None]
    picked = _C.sum(logp * _const(onehot, logp), axis=-1)
    if from_probs:  # -log p[label]; ignored rows read log(0 + 1) = 0
        picked = _C.log(picked + _const((~mask).astype(np.float64), logp))
    out = -picked
    w = _class_weight(op, weight, classes)
    row_w = mask.astype(np.float64) if w is None else w[lab] * mask
    if w is not None:
        out = out * _const(row_w, logp)
    if reduction == "mean":
        total = float(row_w.sum())
        return _C.reshape(_C.sum(out), [1]) * (1.0 / total if total != 0 else 0.0)
    return _reduce(out, reduction)


def cross_entropy(input, label, weight=None, ignore_index=-100, reduction="mean", soft_label=False, axis=-1,
                  use_softmax=True, name=None):
    """Softmax cross-entropy over `axis` (Paddle 2.4's paddle.nn.functional.cross_entropy).

    Hard labels (int64, shape of input without `axis`, or with it of size 1) or soft labels
    (soft_label=True, the input's shape). weight [C] scales each class; mean divides by the
    sum of the counted rows' weights (their count without weight); ignore_index rows count
    nothing. use_softmax=False reads input as probabilities. reduction='none' gives the
    label's shape (hard) or the input's with `axis` of size 1 (soft).
    """
    op = "cross_entropy"
    _check_reduction(op, reduction)
    _tensor(input, op, "input")
    nd = input.dim()
    if not -nd <= axis < nd:
        raise ValueError(f"{op}: axis {axis} is outside [-{nd}, {nd})")
    axis = axis % nd
    label_shape = list(label.shape) if isinstance(label, _C.Tensor) else list(np.shape(label))
    simple = (not soft_label and weight is None and ignore_index == -100 and use_softmax and axis == nd - 1)
    if simple and isinstance(label, _C.Tensor) and label.dtype == _C.dtype.int64:
        out = _f.cross_entropy(input, label, reduction)  # the fused C++ kernel
        return _C.reshape(out, label_shape) if reduction == "none" else out
    x = _move_axis_last(input, axis)
    if soft_label:
        _tensor(label, op, "label")
        _check_same_shape(op, input, label)
        y = _move_axis_last(label, axis)
        logp = _f.log_softmax(x, -1) if use_softmax else _C.log(x)
        out = -_C.sum(y * logp, axis=-1, keepdim=True)
        w = _class_weight(op, weight, x.shape[-1])
        if w is not None:
            row_w = _C.sum(y * _const(w, x), axis=-1, keepdim=True)
            out = out * row_w
            if reduction == "mean":
                total = float(_np(row_w).sum())
                return _C.reshape(_C.sum(out), [1]) * (1.0 / total if total != 0 else 0.0)
        if reduction == "none" and axis != nd - 1:
            out = _C.transpose(out, _inverse_last(nd, axis))
        return _reduce(out, reduction)
    lab = _np(label)
    if lab.ndim == nd:
        lab = np.moveaxis(lab, axis, -1)
    logp = _f.log_softmax(x, -1) if use_softmax else x
    out = _pick(op, logp, lab, weight, ignore_index, reduction, from_probs=not use_softmax)
    return _C.reshape(out, label_shape) if reduction == "none" else out


def _inverse_last(nd, axis):
    """The permutation that undoes _move_axis_last(x, axis) for an nd-dim tensor."""
    perm = [i for i in range(nd) if i != axis] + [axis]
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean", name=None):
    """input [N, C] or [N, C, d1, ...] of log-probabilities, label [N] or [N, d1, ...] ->
    -weight[label] input[label], mean divided by the counted rows' weights."""
    op = "nll_loss"
    _check_reduction(op, reduction)
    _tensor(input, op, "input")
    if input.dim() < 2:
        raise ValueError(f"{op}: input must be [N, C] or [N, C, d1, ...], got shape {list(input.shape)}")
    return _pick(op, _move_axis_last(input, 1), label, weight, ignore_index, reduction)


def kl_div(input, label, reduction="mean", name=None):
    """label (log(label) - input) where label > 0, else 0; reduction 'batchmean' divides the
    sum by the batch size (input.shape[0]). The gradient flows to input only (as Paddle's)."""
    op = "kl_div"
    _check_reduction(op, reduction, _REDUCTIONS + ("batchmean",))
    _tensor(input, op, "input")
    y = _np(label).astype(np.float64)
    positive = y > 0
    safe = np.where(positive, y, 1.0)
    out = _const(np.where(positive, y * np.log(safe), 0.0), input) - input * _const(np.where(positive, y, 0.0), input)
    if reduction == "batchmean":
        batch = input.shape[0] if input.dim() > 0 else 1
        return _C.reshape(_C.sum(out), [1]) * (1.0 / batch)
    return _reduce(out, reduction)
