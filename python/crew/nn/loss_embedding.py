"""Paddle's embedding and metric-learning losses: hinge_embedding_loss, cosine_embedding_loss,
triplet_margin_loss (paddle.nn.functional) and their layers (HingeEmbeddingLoss,
CosineEmbeddingLoss, TripletMarginLoss).

Each follows Paddle's formula and composes crew's differentiable ops (where, relu, sum,
pairwise_distance, ...), so the gradients are autograd's; labels are constants. Scalar results
have shape [1], as crew's other losses (loss_functional.py).
"""
from .. import _C
from .. import tensor_math as _tm
from . import loss_functional as LF
from .functional_extra import pairwise_distance
from .layer import Layer

_f = _C.nn.functional


def _labels_equal(label, value):
    """A bool mask of label == value, as label's shape."""
    return _C.equal(label, _C.full([1], float(value), label.dtype))


def hinge_embedding_loss(input, label, margin=1.0, reduction="mean", name=None):
    """input where label is 1, max(0, margin - input) where label is -1 (0 elsewhere), reduced."""
    op = "hinge_embedding_loss"
    LF._check_reduction(op, reduction)
    LF._tensor(input, op, "input")
    LF._tensor(label, op, "label")
    zeros = _tm.zeros_like(input)
    pos = _C.where(_labels_equal(label, 1), input, zeros)
    neg = _C.where(_labels_equal(label, -1), _f.relu(float(margin) - input), zeros)
    return LF._reduce(pos + neg, reduction)


def cosine_embedding_loss(input1, input2, label, margin=0, reduction="mean", name=None):
    """1 - cos(input1, input2) where label is 1, max(0, cos - margin) where label is -1, over
    the last axis (rows of [N, M] inputs, or one [M] pair), reduced."""
    op = "cosine_embedding_loss"
    LF._check_reduction(op, reduction)
    for arg, x in (("input1", input1), ("input2", input2), ("label", label)):
        LF._tensor(x, op, arg)
    LF._check_same_shape(op, input1, input2)
    if input1.dim() not in (1, 2):
        raise ValueError(f"{op}: input1 must be [N, M] or [M], got shape {list(input1.shape)}")
    rows = 1 if input1.dim() == 1 else input1.shape[0]
    if label.numel() != rows:
        raise ValueError(f"{op}: label of shape {list(label.shape)} must hold one entry per row ({rows})")
    prod = _C.sum(input1 * input2, -1)
    mag1 = _C.sum(input1 * input1, -1) + 1e-11  # Paddle's 10e-12
    mag2 = _C.sum(input2 * input2, -1) + 1e-11
    cos = prod / _C.pow(mag1 * mag2, 0.5)
    label = _C.reshape(label, list(cos.shape))
    zeros = _tm.zeros_like(cos)
    pos = _C.where(_labels_equal(label, 1), 1.0 - cos, zeros)
    neg = _C.where(_labels_equal(label, -1), _f.relu(cos - float(margin)), zeros)
    return LF._reduce(pos + neg, reduction)


def triplet_margin_loss(input, positive, negative, margin=1.0, p=2, epsilon=1e-6, swap=False, reduction="mean",
                        name=None):
    """max(0, d(input, positive) - d(input, negative) + margin) with d the p-norm distance over
    the last axis (epsilon added to the difference); with swap, d(input, negative) is replaced by
    d(positive, negative) where that is smaller. Reduced."""
    op = "triplet_margin_loss"
    LF._check_reduction(op, reduction)
    for arg, x in (("input", input), ("positive", positive), ("negative", negative)):
        LF._tensor(x, op, arg)
    LF._check_same_shape(op, input, positive)
    LF._check_same_shape(op, input, negative)
    if float(margin) < 0:
        raise ValueError(f"{op}: margin must be non-negative, got {margin}")
    d_pos = pairwise_distance(input, positive, p, epsilon)
    d_neg = pairwise_distance(input, negative, p, epsilon)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, epsilon)
        d_neg = _C.where(_C.less_than(d_swap, d_neg), d_swap, d_neg)
    return LF._reduce(_f.relu(d_pos - d_neg + float(margin)), reduction)


class HingeEmbeddingLoss(Layer):
    def __init__(self, margin=1.0, reduction="mean", name=None):
        super().__init__()
        LF._check_reduction("HingeEmbeddingLoss", reduction)
        self.margin, self.reduction = margin, reduction

    def forward(self, input, label):
        return hinge_embedding_loss(input, label, self.margin, self.reduction)


class CosineEmbeddingLoss(Layer):
    def __init__(self, margin=0, reduction="mean", name=None):
        super().__init__()
        LF._check_reduction("CosineEmbeddingLoss", reduction)
        if not -1 <= float(margin) <= 1:
            raise ValueError(f"CosineEmbeddingLoss: margin must be in [-1, 1], got {margin}")
        self.margin, self.reduction = margin, reduction

    def forward(self, input1, input2, label):
        return cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class TripletMarginLoss(Layer):
    def __init__(self, margin=1.0, p=2.0, epsilon=1e-6, swap=False, reduction="mean", name=None):
        super().__init__()
        LF._check_reduction("TripletMarginLoss", reduction)
        self._args = (margin, p, epsilon, swap, reduction)

    def forward(self, input, positive, negative):
        return triplet_margin_loss(input, positive, negative, *self._args)
