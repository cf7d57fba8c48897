"""Paddle 2.4's loss layers (paddle.nn.*Loss): the options at construction, the functional
form (crew.nn.loss_functional) at call."""
from . import loss_functional as LF
from .layer import Layer


class _Loss(Layer):
    _allowed = LF._REDUCTIONS

    def __init__(self, reduction="mean"):
        super().__init__()
        LF._check_reduction(type(self).__name__, reduction, self._allowed)
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", soft_label=False, axis=-1,
                 use_softmax=True, name=None):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.soft_label = weight, ignore_index, soft_label
        self.axis, self.use_softmax = axis, use_softmax

    def forward(self, input, label):
        return LF.cross_entropy(input, label, self.weight, self.ignore_index, self.reduction, self.soft_label,
                                self.axis, self.use_softmax)


class MSELoss(_Loss):
    def forward(self, input, label):
        return LF.mse_loss(input, label, self.reduction)


class L1Loss(_Loss):
    def __init__(self, reduction="mean", name=None):
        super().__init__(reduction)

    def forward(self, input, label):
        return LF.l1_loss(input, label, self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", delta=1.0, name=None):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, label):
        return LF.smooth_l1_loss(input, label, self.reduction, self.delta)


class BCELoss(_Loss):
    def __init__(self, weight=None, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, label):
        return LF.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, logit, label):
        return LF.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction, self.pos_weight)


class NLLLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, label):
        return LF.nll_loss(input, label, self.weight, self.ignore_index, self.reduction)


class KLDivLoss(_Loss):
    _allowed = LF._REDUCTIONS + ("batchmean",)

    def forward(self, input, label):
        return LF.kl_div(input, label, self.reduction)
