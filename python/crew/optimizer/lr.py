"""crew.optimizer.lr: Paddle's learning-rate schedules (crew::optim, C++), with Paddle's
`verbose` argument: when true, the schedule prints "Epoch N: StepDecay set learning rate to
0.05." at construction and after every step(), as Paddle 2.4 does."""
from .. import _C

_lr = _C.optimizer.lr
LRScheduler = _lr.LRScheduler


def _with_verbose(cls):
    class Schedule(cls):
        def __init__(self, *args, verbose=False, **kwargs):
            super().__init__(*args, **kwargs)
            self._verbose = bool(verbose)
            self._say()

        def step(self, *args, **kwargs):
            super().step(*args, **kwargs)
            self._say()

        def _say(self):
            if self._verbose:
                print(f"Epoch {self.last_epoch}: {cls.__name__} set learning rate to {self.last_lr}.")

    Schedule.__name__ = Schedule.__qualname__ = cls.__name__
    Schedule.__doc__ = cls.__doc__
    return Schedule


StepDecay = _with_verbose(_lr.StepDecay)
CosineAnnealingDecay = _with_verbose(_lr.CosineAnnealingDecay)
ExponentialDecay = _with_verbose(_lr.ExponentialDecay)
MultiStepDecay = _with_verbose(_lr.MultiStepDecay)
PiecewiseDecay = _with_verbose(_lr.PiecewiseDecay)
LinearWarmup = _with_verbose(_lr.LinearWarmup)

__all__ = ["LRScheduler", "StepDecay", "CosineAnnealingDecay", "ExponentialDecay", "MultiStepDecay",
           "PiecewiseDecay", "LinearWarmup"]
