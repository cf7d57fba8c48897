"""crew.hapi: Paddle's high-level API (paddle.Model, paddle.summary, paddle.callbacks)."""
from . import callbacks
from .model import Model
from .model_summary import summary

__all__ = ["Model", "summary", "callbacks"]
