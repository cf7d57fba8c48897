"""The metrics of paddle.metric, with Paddle 2.4's arithmetic (counts on the host, in NumPy)."""
import abc

import numpy as np

from .. import _C


def _np(x):
    return x.numpy() if isinstance(x, _C.Tensor) else np.asarray(x)


class Metric(abc.ABC):
    """Base of metrics: reset() clears the state, update(*compute outputs) adds a batch,
    accumulate() gives the value over the batches since reset, name() its log name(s).
    compute(*outputs_and_labels) runs per batch before update (identity by default)."""

    def __init__(self):
        pass

    @abc.abstractmethod
    def reset(self):
        raise NotImplementedError(f"{type(self).__name__} defines no reset()")

    @abc.abstractmethod
    def update(self, *args):
        raise NotImplementedError(f"{type(self).__name__} defines no update()")

    @abc.abstractmethod
    def accumulate(self):
        raise NotImplementedError(f"{type(self).__name__} defines no accumulate()")

    @abc.abstractmethod
    def name(self):
        raise NotImplementedError(f"{type(self).__name__} defines no name()")

    def compute(self, *args):
        return args


class Accuracy(Metric):
    """Top-k accuracy for each k in topk; names 'acc' (topk=(1,)) or 'acc_top1', 'acc_top5', ..."""

    def __init__(self, topk=(1,), name=None, *args, **kwargs):
        super().__init__()
        self.topk = tuple(topk) if isinstance(topk, (list, tuple)) else (int(topk),)
        self.maxk = max(self.topk)
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in self.topk] if self.maxk != 1 else [name]
        self.reset()

    def compute(self, pred, label, *args):
        """pred [..., C] scores, label [...] / [..., 1] class ids or [..., C] one-hot ->
        float32 [..., maxk]: 1 where the label is the prediction of that rank."""
        p = _np(pred)
        lab = _np(label)
        if lab.ndim == p.ndim and lab.shape[-1] != 1:  # one-hot or soft labels
            lab = lab.argmax(axis=-1)
        lab = lab.reshape(p.shape[:-1] + (1,))
        order = np.argsort(-p, axis=-1, kind="stable")[..., :self.maxk]
        return _C.to_tensor((order == lab).astype(np.float32))

    def update(self, correct, *args):
        correct = _np(correct)
        num_samples = int(np.prod(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = float(correct[..., :k].sum())
            accs.append(num_corrects / num_samples if num_samples else 0.0)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self):
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        return self._name


def _binary(preds, labels, op):
    p = _np(preds).reshape(-1)
    lab = _np(labels).reshape(-1)
    if p.shape != lab.shape:
        raise ValueError(f"{op}.update: {p.size} predictions but {lab.size} labels")
    return np.floor(p + 0.5).astype(np.int64), lab.astype(np.int64)


class Precision(Metric):
    """Binary precision tp / (tp + fp); preds are probabilities rounded at 0.5."""

    def __init__(self, name="precision", *args, **kwargs):
        super().__init__()
        self._name = name
        self.reset()

    def update(self, preds, labels):
        p, lab = _binary(preds, labels, "Precision")
        self.tp += int(((p == 1) & (lab == 1)).sum())
        self.fp += int(((p == 1) & (lab != 1)).sum())

    def reset(self):
        self.tp = 0
        self.fp = 0

    def accumulate(self):
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0

    def name(self):
        return self._name


class Recall(Metric):
    """Binary recall tp / (tp + fn); preds are probabilities rounded at 0.5."""

    def __init__(self, name="recall", *args, **kwargs):
        super().__init__()
        self._name = name
        self.reset()

    def update(self, preds, labels):
        p, lab = _binary(preds, labels, "Recall")
        self.tp += int(((lab == 1) & (p == 1)).sum())
        self.fn += int(((lab == 1) & (p != 1)).sum())

    def reset(self):
        self.tp = 0
        self.fn = 0

    def accumulate(self):
        positives = self.tp + self.fn
        return float(self.tp) / positives if positives != 0 else 0.0

    def name(self):
        return self._name


class Auc(Metric):
    """Area under the ROC curve from histograms of num_thresholds + 1 buckets of the positive
    class's probability (preds [N, 2], column 1; labels [N] or [N, 1] of 0/1)."""

    def __init__(self, curve="ROC", num_thresholds=4095, name="auc", *args, **kwargs):
        super().__init__()
        if curve != "ROC":
            raise ValueError(f"Auc: curve='{curve}': crew supports 'ROC' (as Paddle 2.4's Auc)")
        self._curve = curve
        self._num_thresholds = int(num_thresholds)
        self._name = name
        self.reset()

    def update(self, preds, labels):
        p = _np(preds)
        lab = _np(labels).reshape(-1)
        if p.ndim != 2 or p.shape[1] < 2 or p.shape[0] != lab.size:
            raise ValueError(f"Auc.update: preds must be [N, 2] and labels [N] or [N, 1], got "
                             f"{list(p.shape)} and {list(_np(labels).shape)}")
        bins = (p[:, 1] * self._num_thresholds).astype(np.int64)
        if bins.size and (bins.min() < 0 or bins.max() > self._num_thresholds):
            raise ValueError("Auc.update: preds must be probabilities in [0, 1]")
        pos = lab != 0
        np.add.at(self._stat_pos, bins[pos], 1.0)
        np.add.at(self._stat_neg, bins[~pos], 1.0)

    @staticmethod
    def trapezoid_area(x1, x2, y1, y2):
        return abs(x1 - x2) * (y1 + y2) / 2.0

    def accumulate(self):
        tot_pos = tot_neg = auc = 0.0
        for idx in range(self._num_thresholds, -1, -1):
            pos_prev, neg_prev = tot_pos, tot_neg
            tot_pos += self._stat_pos[idx]
            tot_neg += self._stat_neg[idx]
            auc += self.trapezoid_area(tot_neg, neg_prev, tot_pos, pos_prev)
        return auc / tot_pos / tot_neg if tot_pos > 0.0 and tot_neg > 0.0 else 0.0

    def reset(self):
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)

    def name(self):
        return self._name


def accuracy(input, label, k=1, correct=None, total=None, name=None):
    """Fraction of rows of input [N, C] whose top-k scores hold label ([N, 1] or [N]); a
    float32 Tensor of shape [1]. correct and total (int Tensors of shape [1]), when given,
    receive the counts, as Paddle's."""
    x = _np(input)
    if x.ndim != 2:
        raise ValueError(f"accuracy: input must be [N, C], got shape {list(x.shape)}")
    lab = _np(label).reshape(-1)
    if lab.size != x.shape[0]:
        raise ValueError(f"accuracy: label of shape {list(_np(label).shape)} for {x.shape[0]} rows")
    if not 1 <= k <= x.shape[1]:
        raise ValueError(f"accuracy: k = {k} must be in [1, {x.shape[1]}]")
    order = np.argsort(-x, axis=-1, kind="stable")[:, :k]
    hits = int((order == lab[:, None]).any(axis=1).sum())
    rows = x.shape[0]
    for out, value in ((correct, hits), (total, rows)):
        if out is not None:
            out.numpy()[...] = value  # numpy() shares the tensor's memory
    return _C.to_tensor(np.array([hits / rows if rows else 0.0], dtype=np.float32))
