"""crew.optimizer.lr: Paddle's learning-rate schedules (crew::optim, C++)."""
from .._C.optimizer.lr import (LRScheduler, StepDecay, CosineAnnealingDecay, ExponentialDecay,  # noqa: F401
                               MultiStepDecay, PiecewiseDecay, LinearWarmup)

__all__ = ["LRScheduler", "StepDecay", "CosineAnnealingDecay", "ExponentialDecay", "MultiStepDecay",
           "PiecewiseDecay", "LinearWarmup"]
