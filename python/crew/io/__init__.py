"""crew.io: Dataset, samplers, DataLoader (Paddle's paddle.io)."""
