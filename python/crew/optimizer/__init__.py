"""crew.optimizer: Paddle's paddle.optimizer (SGD, Momentum, Adam, AdamW) in C++.

    sched = crew.optimizer.lr.StepDecay(learning_rate=0.1, step_size=30)
    opt = crew.optimizer.Momentum(learning_rate=sched, parameters=model.parameters(),
                                  grad_clip=crew.nn.ClipGradByGlobalNorm(1.0))
    loss.backward(); opt.step(); opt.clear_grad()
    sched.step()   # once per epoch (or per step, as the schedule is meant)

learning_rate is a float or a crew.optimizer.lr schedule, which the optimizer reads at
every step().
"""
from .._C.optimizer import SGD, Adam, AdamW, Momentum, Optimizer  # noqa: F401
from . import lr  # noqa: F401

__all__ = ["SGD", "Momentum", "Adam", "AdamW", "Optimizer", "lr"]
