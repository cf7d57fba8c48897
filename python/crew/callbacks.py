"""crew.callbacks: Paddle's paddle.callbacks (the hooks of Model.fit; crew.hapi.callbacks)."""
from .hapi.callbacks import (Callback, CallbackList, EarlyStopping, LRScheduler, MetricsLogger,  # noqa: F401
                             ModelCheckpoint, ProgBarLogger, ReduceLROnPlateau)

__all__ = ["Callback", "CallbackList", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping", "LRScheduler", "ReduceLROnPlateau",
           "MetricsLogger"]

_NOT_HERE = {
    "VisualDL": "crew.callbacks.VisualDL is not supported (crew does not depend on VisualDL): "
                "use crew.callbacks.MetricsLogger(path), whose JSON lines `crew plot` draws",
    "WandbCallback": "crew.callbacks.WandbCallback is not supported (no network access): "
                     "use crew.callbacks.MetricsLogger(path)",
}


def __getattr__(name):
    if name in _NOT_HERE:
        raise AttributeError(_NOT_HERE[name])
    raise AttributeError(f"module 'crew.callbacks' has no attribute '{name}'")
