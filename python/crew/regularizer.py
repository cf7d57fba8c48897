"""crew.regularizer: Paddle's paddle.regularizer (L1Decay, L2Decay).

A regularizer on a parameter (ParamAttr(regularizer=...)) replaces the optimizer's
weight_decay for that parameter, as in Paddle; it adds coeff * sign(p) (L1) or coeff * p (L2)
to the gradient after gradient clipping, before the update.
"""
import numpy as np


class WeightDecayRegularizer:
    def __init__(self, coeff=0.0):
        self._coeff = float(coeff)

    @property
    def coeff(self):
        return self._coeff

    def grad_term(self, value):
        """The term added to the gradient of a parameter holding `value` (a NumPy array)."""
        raise NotImplementedError


class L1Decay(WeightDecayRegularizer):
    def grad_term(self, value):
        return self._coeff * np.sign(value)

    def __repr__(self):
        return f"L1Decay, coeff={self._coeff}"


class L2Decay(WeightDecayRegularizer):
    def grad_term(self, value):
        return self._coeff * value

    def __repr__(self):
        return f"L2Decay, coeff={self._coeff}"


__all__ = ["L1Decay", "L2Decay"]
