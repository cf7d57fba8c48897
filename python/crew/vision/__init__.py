"""crew.vision: datasets, transforms, models (Paddle's paddle.vision)."""
from . import datasets, transforms, models  # noqa: F401
from .folder import get_image_backend, image_load, set_image_backend  # noqa: F401,E402
