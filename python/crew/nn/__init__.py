"""crew.nn: Layer and the layers (Paddle's paddle.nn)."""
