"""crew.optimizer.lr: Paddle's learning-rate schedules (crew::optim, C++), with Paddle's
`verbose` argument: when true, the schedule prints "Epoch N: StepDecay set learning rate to
0.05." at construction and after every step(), as Paddle 2.4 does (ReduceOnPlateau: only when
it lowers the rate)."""
import numpy as np

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
PolynomialDecay = _with_verbose(_lr.PolynomialDecay)
NoamDecay = _with_verbose(_lr.NoamDecay)
LambdaDecay = _with_verbose(_lr.LambdaDecay)
MultiplicativeDecay = _with_verbose(_lr.MultiplicativeDecay)
NaturalExpDecay = _with_verbose(_lr.NaturalExpDecay)
InverseTimeDecay = _with_verbose(_lr.InverseTimeDecay)
OneCycleLR = _with_verbose(_lr.OneCycleLR)
CyclicLR = _with_verbose(_lr.CyclicLR)


def _metric_value(metrics):
    """Paddle's ReduceOnPlateau.step metrics: a number, or a Tensor/ndarray of one element."""
    if isinstance(metrics, (bool, np.bool_)):
        raise TypeError("ReduceOnPlateau.step(): metrics must be an int, a float, a numpy.ndarray or a Tensor "
                        f"of shape [1], got {type(metrics).__name__}")
    if isinstance(metrics, (int, float, np.floating, np.integer)):
        return float(metrics)
    if isinstance(metrics, _C.Tensor):
        metrics = metrics.numpy()
    if isinstance(metrics, np.ndarray):
        if metrics.size != 1 or metrics.ndim > 1:
            raise ValueError(f"ReduceOnPlateau.step(): the metrics.shape should be [1], but it is "
                             f"{list(metrics.shape)}; maybe call paddle.mean on it first")
        return float(metrics.reshape(()))
    raise TypeError("ReduceOnPlateau.step(): metrics must be an int, a float, a numpy.ndarray or a Tensor of "
                    f"shape [1], got {type(metrics).__name__}")


class ReduceOnPlateau(_lr.ReduceOnPlateau):
    """ReduceOnPlateau(learning_rate, mode='min', factor=0.1, patience=10, threshold=1e-4,
    threshold_mode='rel', cooldown=0, min_lr=0, epsilon=1e-8, verbose=False): lowers the rate
    by factor when the metric given to step(metrics) stops improving (crew::optim::ReduceOnPlateau)."""

    def __init__(self, learning_rate, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, epsilon=1e-8, verbose=False):
        super().__init__(learning_rate, mode, factor, patience, threshold, threshold_mode, cooldown, min_lr,
                         epsilon)
        self._verbose = bool(verbose)

    def step(self, metrics, epoch=None):
        before = self.last_lr
        super().step(_metric_value(metrics), epoch)
        if self._verbose and self.last_lr != before:
            print(f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to {self.last_lr}.")

__all__ = ["LRScheduler", "StepDecay", "CosineAnnealingDecay", "ExponentialDecay", "MultiStepDecay",
           "PiecewiseDecay", "LinearWarmup", "PolynomialDecay", "NoamDecay", "LambdaDecay", "MultiplicativeDecay", "NaturalExpDecay",
           "InverseTimeDecay", "OneCycleLR", "CyclicLR", "ReduceOnPlateau"]
