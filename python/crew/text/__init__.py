"""crew.text: text models (Paddle's paddle.text module; the GPT itself is crew's)."""
from . import models  # noqa: F401
from .models import GPT  # noqa: F401

__all__ = ["models", "GPT"]
