"""crew.vision: datasets, transforms, models (Paddle's paddle.vision)."""
from . import datasets, transforms, models  # noqa: F401
