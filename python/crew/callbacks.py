"""crew.callbacks: Paddle's paddle.callbacks (the hooks of Model.fit; crew.hapi.callbacks)."""
from .hapi.callbacks import (Callback, CallbackList, EarlyStopping, LRScheduler, MetricsLogger,  # noqa: F401
                             ModelCheckpoint, ProgBarLogger, ReduceLROnPlateau)

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping", "LRScheduler", "ReduceLROnPlateau",
           "MetricsLogger"]
