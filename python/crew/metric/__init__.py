"""crew.metric: Paddle 2.4's paddle.metric (Metric, Accuracy, Precision, Recall, Auc, accuracy).

    m = crew.metric.Accuracy(topk=(1, 5))
    correct = m.compute(logits, labels)     # [N, 5] float32: hit at rank <= k
    m.update(correct)                       # returns this batch's [top1, top5]
    m.accumulate()                          # over every update since reset()

The metrics keep their counts in NumPy on the host, as Paddle's do; Model.fit calls
compute(outputs, labels), update(...) per batch and accumulate() for its logs.
"""
from .metrics import Metric, Accuracy, Precision, Recall, Auc, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]
