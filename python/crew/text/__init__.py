"""crew.text: text models and data sets (Paddle's paddle.text module; the GPT itself is crew's)."""
from . import models  # noqa: F401
from .models import GPT  # noqa: F401
from . import datasets  # noqa: F401,E402
from .datasets import Imdb, TextFolder  # noqa: F401,E402

__all__ = ["models", "GPT", "datasets", "Imdb", "TextFolder"]
