"""crew.metric against Paddle 2.4's documented examples and NumPy references."""
import numpy as np
import pytest

import crew as paddle


def test_accuracy_doc_example():
    x = paddle.to_tensor(np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.4, 0.3, 0.2],
                                   [0.1, 0.2, 0.4, 0.3], [0.1, 0.2, 0.3, 0.4]]))
    y = paddle.to_tensor(np.array([[0], [1], [2], [3]]))
    m = paddle.metric.Accuracy()
    correct = m.compute(x, y)
    assert list(correct.shape) == [4, 1]
    assert m.update(correct) == 0.75
    assert m.accumulate() == 0.75
    assert m.name() == ["acc"]


def test_accuracy_topk_accumulates_over_batches():
    rng = np.random.default_rng(0)
    m = paddle.metric.Accuracy(topk=(1, 5), name="a")
    assert m.name() == ["a_top1", "a_top5"]
    hits1 = hits5 = rows = 0
    for n in (7, 5):
        x = rng.normal(size=(n, 10)).astype(np.float32)
        y = rng.integers(0, 10, size=(n, 1))
        rank = (x > x[np.arange(n), y[:, 0]][:, None]).sum(axis=1)
        hits1 += int((rank < 1).sum())
        hits5 += int((rank < 5).sum())
        rows += n
        batch = m.update(m.compute(paddle.to_tensor(x), paddle.to_tensor(y)))
        assert batch == [float((rank < 1).sum()) / n, float((rank < 5).sum()) / n]
    assert m.accumulate() == [hits1 / rows, hits5 / rows]
    m.reset()
    assert m.accumulate() == [0.0, 0.0]


def test_accuracy_one_hot_labels():
    m = paddle.metric.Accuracy()
    x = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], dtype=np.float32)
    y = np.array([[1, 0], [1, 0], [1, 0]], dtype=np.float32)
    m.update(m.compute(paddle.to_tensor(x), paddle.to_tensor(y)))
    assert m.accumulate() == pytest.approx(2 / 3)


def test_precision_and_recall_doc_examples():
    x = np.array([0.1, 0.5, 0.6, 0.7])
    p = paddle.metric.Precision()
    p.update(x, np.array([0, 1, 1, 1]))
    assert p.accumulate() == 1.0
    r = paddle.metric.Recall()
    r.update(x, np.array([1, 0, 1, 1]))
    assert r.accumulate() == pytest.approx(0.6666666666666666)
    assert (p.name(), r.name()) == ("precision", "recall")
    p.reset()
    assert p.accumulate() == 0.0


def test_precision_recall_with_tensors_of_shape_n1():
    preds = paddle.to_tensor(np.array([[0.9], [0.2], [0.7], [0.4]], dtype=np.float32))
    labels = paddle.to_tensor(np.array([[1], [1], [0], [0]]))
    p, r = paddle.metric.Precision(), paddle.metric.Recall()
    p.update(preds, labels)
    r.update(preds, labels)
    assert p.accumulate() == 0.5 and r.accumulate() == 0.5


def exact_auc(score, label):
    pos, neg = score[label == 1], score[label == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


def test_auc_matches_the_exact_area_for_distinct_buckets():
    rng = np.random.default_rng(3)
    m = paddle.metric.Auc()
    scores, labels = [], []
    for _ in range(3):
        c1 = rng.permutation(np.arange(1, 4095, 97))[:10] / 4095.0 + 1e-6
        preds = np.stack([1 - c1, c1], axis=1)
        lab = rng.integers(0, 2, size=(10, 1))
        m.update(preds=preds, labels=lab)
        scores.append(c1)
        labels.append(lab[:, 0])
    s, y = np.concatenate(scores), np.concatenate(labels)
    assert m.accumulate() == pytest.approx(exact_auc(s, y))
    assert m.name() == "auc"
    m.reset()
    assert m.accumulate() == 0.0


def test_auc_ties_and_perfect_separation():
    m = paddle.metric.Auc(num_thresholds=10)
    m.update(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 0]))
    assert m.accumulate() == 1.0
    m.update(np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([1, 0]))
    assert m.accumulate() == pytest.approx(exact_auc(np.array([0.9, 0.2, 0.5, 0.5]), np.array([1, 0, 1, 0])))
    with pytest.raises(ValueError, match="curve"):
        paddle.metric.Auc(curve="PR")


def test_functional_accuracy_doc_example_and_counts():
    predictions = paddle.to_tensor(np.array([[0.2, 0.1, 0.4, 0.1, 0.1], [0.2, 0.3, 0.1, 0.15, 0.25]], np.float32))
    label = paddle.to_tensor(np.array([[2], [0]]))
    result = paddle.metric.accuracy(input=predictions, label=label, k=1)
    assert list(result.shape) == [1] and result.numpy()[0] == 0.5
    correct = paddle.to_tensor(np.zeros([1], np.int32))
    total = paddle.to_tensor(np.zeros([1], np.int32))
    assert paddle.metric.accuracy(predictions, label, k=2).numpy()[0] == 0.5
    top3 = paddle.metric.accuracy(predictions, label, k=3, correct=correct, total=total)
    assert top3.numpy()[0] == 1.0
    assert correct.numpy()[0] == 2 and total.numpy()[0] == 2


def test_metric_base_is_abstract_and_compute_passes_through():
    with pytest.raises(TypeError):
        paddle.metric.Metric()

    class Count(paddle.metric.Metric):
        def reset(self):
            self.n = 0

        def update(self, x, y):
            self.n += len(x)

        def accumulate(self):
            return self.n

        def name(self):
            return "count"

    c = Count()
    c.reset()
    c.update(*c.compute([1, 2], [3, 4]))
    assert c.accumulate() == 2
