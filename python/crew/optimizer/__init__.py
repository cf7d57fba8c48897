"""crew.optimizer: Paddle's paddle.optimizer (SGD, Momentum, Adam, AdamW) in C++.

    opt = crew.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    loss.backward(); opt.step(); opt.clear_grad()

The learning rate is a float here (LR schedulers are not bound yet).
"""
from .._C.optimizer import SGD, Adam, AdamW, Momentum, Optimizer  # noqa: F401
