"""crew.vision: datasets, transforms, models (Paddle's paddle.vision)."""
