"""crew.ParamAttr: Paddle's paddle.ParamAttr, and how layers apply weight_attr/bias_attr.

    fc = paddle.nn.Linear(4, 2, weight_attr=paddle.ParamAttr(
        name="fc_w", initializer=paddle.nn.initializer.Normal(std=0.02), learning_rate=0.5,
        regularizer=paddle.regularizer.L2Decay(1e-4)), bias_attr=False)

A layer builds its parameters with its own defaults, then apply_attr() overwrites a
parameter's values when the attribute names an initializer, and records the rest on the
parameter as Paddle does: p.name, p.optimize_attr = {"learning_rate": ...}, p.regularizer,
p.trainable (False sets stop_gradient). The optimizers (crew.optimizer) honour
learning_rate and regularizer.
"""


class ParamAttr:
    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None,
                 trainable=True, do_model_average=False, need_clip=True):
        if learning_rate < 0:
            raise ValueError(f"ParamAttr: learning_rate must be >= 0, got {learning_rate}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = bool(trainable)
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    def __repr__(self):
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, regularizer={self.regularizer!r}, "
                f"trainable={self.trainable})")

    @staticmethod
    def _to_attr(arg):
        """Paddle's rule: None -> default ParamAttr; a str -> its name; an initializer -> its
        initializer; False stays False (no parameter); a ParamAttr stays."""
        from .nn.initializer import Initializer
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False or isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise TypeError(f"ParamAttr: expected None, False, a str, an Initializer or a ParamAttr, "
                        f"got {type(arg).__name__}")


def apply_attr(param, attr, default_initializer=None):
    """Applies `attr` (anything ParamAttr._to_attr takes, but not False) to `param` in place:
    the attribute's initializer, else `default_initializer` (when given), fills it."""
    attr = ParamAttr._to_attr(attr)
    init = attr.initializer or default_initializer
    if init is not None:
        init(param)
    if attr.name is not None:
        param.name = attr.name
    param.optimize_attr = {"learning_rate": attr.learning_rate}
    param.regularizer = attr.regularizer
    param.trainable = attr.trainable
    param.need_clip = attr.need_clip
    if not attr.trainable:
        param.stop_gradient = True
    return param


__all__ = ["ParamAttr", "apply_attr"]
