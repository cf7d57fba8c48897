"""crew.optimizer: optimizers (Paddle's paddle.optimizer)."""
