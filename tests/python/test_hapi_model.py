"""paddle.Model (hapi), paddle.summary and paddle.callbacks, as Paddle 2.4's quick start and
API docs use them; and Model.fit on 2 ranks under crew.distributed.launch."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import crew as paddle
import crew.nn as nn
from crew.static import InputSpec
from crew.vision.models import LeNet  # paddle.summary's documented example


class Blobs(paddle.io.Dataset):
    """Two Gaussian blobs in 8 features: (x float32 [8], label int64 [1])."""

    def __init__(self, n, seed=0, labels=True):
        rng = np.random.default_rng(seed)
        self.y = rng.integers(0, 2, size=(n, 1)).astype(np.int64)
        self.x = (rng.normal(size=(n, 8)) + 1.5 * (2 * self.y - 1)).astype(np.float32)
        self.labels = labels

    def __getitem__(self, i):
        return (self.x[i], self.y[i]) if self.labels else self.x[i]

    def __len__(self):
        return len(self.x)


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(nn.functional.relu(self.fc1(x)))


def make_model(lr=0.05, metrics=True, optimizer=None):
    paddle.seed(0)
    model = paddle.Model(MLP(), inputs=InputSpec([None, 8], "float32", "x"),
                         labels=InputSpec([None, 1], "int64", "label"))
    opt = optimizer(model) if optimizer else paddle.optimizer.SGD(learning_rate=lr, parameters=model.parameters())
    model.prepare(opt, nn.CrossEntropyLoss(), paddle.metric.Accuracy() if metrics else None)
    return model


LENET_TABLE = """\
---------------------------------------------------------------------------
 Layer (type)       Input Shape          Output Shape         Param #    
===========================================================================
   Conv2D-1       [[1, 1, 28, 28]]      [1, 6, 28, 28]          60       
    ReLU-1        [[1, 6, 28, 28]]      [1, 6, 28, 28]           0       
  MaxPool2D-1     [[1, 6, 28, 28]]      [1, 6, 14, 14]           0       
   Conv2D-2       [[1, 6, 14, 14]]     [1, 16, 10, 10]         2,416     
    ReLU-2       [[1, 16, 10, 10]]     [1, 16, 10, 10]           0       
  MaxPool2D-2    [[1, 16, 10, 10]]      [1, 16, 5, 5]            0       
   Linear-1          [[1, 400]]            [1, 120]           48,120     
   Linear-2          [[1, 120]]            [1, 84]            10,164     
   Linear-3          [[1, 84]]             [1, 10]              850      
===========================================================================
Total params: 61,610
Trainable params: 61,610
Non-trainable params: 0
---------------------------------------------------------------------------
Input size (MB): 0.00
Forward/backward pass size (MB): 0.11
Params size (MB): 0.24
Estimated Total Size (MB): 0.35
---------------------------------------------------------------------------
"""


def test_summary_prints_paddles_lenet_table(capsys):
    info = paddle.summary(LeNet(), (1, 1, 28, 28))
    assert info == {"total_params": 61610, "trainable_params": 61610}
    assert capsys.readouterr().out == LENET_TABLE + "\n"
    # Model.summary reads the InputSpec; a batch dimension of None becomes 1
    model = paddle.Model(LeNet(), inputs=InputSpec([None, 1, 28, 28], "float32", "image"))
    assert model.summary() == info
    assert capsys.readouterr().out == LENET_TABLE + "\n"


def test_summary_counts_frozen_parameters_and_several_inputs(capsys):
    class Two(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 2)
            self.b = nn.Linear(4, 2)

        def forward(self, x, y):
            return self.a(x) + self.b(y)

    net = Two()
    net.b.weight.stop_gradient = True
    info = paddle.summary(net, [(2, 3), (2, 4)])
    assert info == {"total_params": 18, "trainable_params": 10}
    out = capsys.readouterr().out
    assert "Non-trainable params: 8" in out and "[[2, 4]]" in out
    with pytest.raises(ValueError, match="input_size"):
        paddle.summary(net)


def test_fit_evaluate_predict(capsys):
    model = make_model()
    model.fit(Blobs(96, 1), Blobs(40, 2), batch_size=16, epochs=3, log_freq=2, verbose=2)
    out = capsys.readouterr().out
    assert out.startswith("The loss value printed in the log is the current step, and the metric is the "
                          "average value of previous steps.\nEpoch 1/3\n")
    assert "Epoch 1/3" in out and "Epoch 3/3" in out
    assert "step 2/6 - loss:" in out and "step 6/6 - loss:" in out and " - acc: " in out
    assert out.count("Eval begin...") == 3 and "Eval samples: 40" in out
    result = model.evaluate(Blobs(40, 2), batch_size=16, verbose=0)
    assert set(result) == {"loss", "acc"}
    assert isinstance(result["loss"], list) and len(result["loss"]) == 1
    assert result["acc"] >= 0.9
    preds = model.predict(Blobs(10, 3, labels=False), batch_size=4, verbose=0)
    assert len(preds) == 1 and [p.shape for p in preds[0]] == [(4, 2), (4, 2), (2, 2)]
    stacked = model.predict(Blobs(10, 3), batch_size=4, stack_outputs=True, verbose=0)
    assert stacked[0].shape == (10, 2)
    np.testing.assert_allclose(stacked[0], np.vstack(preds[0]), rtol=1e-6)


def test_fit_accepts_a_dataloader_and_counts_forward_inputs():
    paddle.seed(0)
    model = paddle.Model(MLP())  # no InputSpec: forward(x) takes one input
    model.prepare(paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters()), nn.CrossEntropyLoss())
    loader = paddle.io.DataLoader(Blobs(64, 1), batch_size=16, shuffle=True)
    model.fit(loader, epochs=2, verbose=0)
    result = model.evaluate(paddle.io.DataLoader(Blobs(32, 2), batch_size=16), verbose=0)
    assert list(result) == ["loss"] and result["loss"][0] < 0.5


def test_batch_methods_return_paddles_forms():
    model = make_model()
    ds = Blobs(8, 4)
    x, y = ds.x, ds.y
    loss, metrics = model.train_batch([x], [y])
    assert len(loss) == 1 and loss[0].shape == (1,) and len(metrics) == 1
    before = [p.numpy().copy() for p in model.parameters()]
    model.train_batch([x], [y], update=False)  # gradients only
    assert all(np.array_equal(b, p.numpy()) for b, p in zip(before, model.parameters()))
    loss, metrics = model.eval_batch([paddle.to_tensor(x)], [paddle.to_tensor(y)])
    assert loss[0].shape == (1,) and 0.0 <= metrics[0] <= 1.0
    out = model.predict_batch([x])
    assert len(out) == 1 and out[0].shape == (8, 2)
    no_metric = make_model(metrics=False)
    assert len(no_metric.train_batch([x], [y])) == 1
    with pytest.raises(RuntimeError, match="prepare"):
        paddle.Model(MLP()).train_batch([x], [y])
    with pytest.raises(TypeError, match="Metric"):
        paddle.Model(MLP()).prepare(None, nn.CrossEntropyLoss(), metrics=[object()])


def test_save_and_load_round_trip(tmp_path):
    model = make_model(optimizer=lambda m: paddle.optimizer.Adam(learning_rate=0.01, parameters=m.parameters()))
    model.fit(Blobs(32, 1), batch_size=16, epochs=1, verbose=0)
    path = str(tmp_path / "ckpt" / "mlp")
    model.save(path)
    assert os.path.exists(path + ".pdparams") and os.path.exists(path + ".pdopt")
    model.save(str(tmp_path / "infer"), training=False)
    assert os.listdir(tmp_path / ".") and not os.path.exists(tmp_path / "infer.pdopt")
    assert os.path.exists(tmp_path / "infer.pdparams")
    other = make_model(optimizer=lambda m: paddle.optimizer.Adam(learning_rate=0.01, parameters=m.parameters()))
    other.load(path)
    for a, b in zip(model.parameters(), other.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert other._optimizer.state_dict()["@step"].numpy() == model._optimizer.state_dict()["@step"].numpy()
    fresh = make_model(optimizer=lambda m: paddle.optimizer.Adam(learning_rate=0.01, parameters=m.parameters()))
    fresh.load(path + ".pdparams", reset_optimizer=True)
    assert int(fresh._optimizer.state_dict()["@step"].numpy()) == 0
    # a file of another network: an error naming the key, or skipped with skip_mismatch
    paddle.save({"fc1.weight": paddle.to_tensor(np.zeros([3, 3], np.float32))}, str(tmp_path / "bad.pdparams"))
    with pytest.raises(ValueError, match="fc1.weight receives a shape"):
        fresh.load(str(tmp_path / "bad"))
    with pytest.warns(UserWarning, match="Skip loading"):
        fresh.load(str(tmp_path / "bad"), skip_mismatch=True)
    with pytest.raises(FileNotFoundError):
        fresh.load(str(tmp_path / "missing"))


class Recorder(paddle.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin", sorted(self.params)))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_train_batch_end(self, step, logs=None):
        self.events.append(("batch_end", step, logs["batch_size"], "loss" in logs))

    def on_eval_end(self, logs=None):
        self.events.append(("eval_end", sorted(logs)))

    def on_train_end(self, logs=None):
        self.events.append(("train_end",))


def test_callbacks_are_called_in_paddles_order(tmp_path, capsys):
    rec = Recorder()
    model = make_model()
    model.fit(Blobs(32, 1), Blobs(16, 2), batch_size=16, epochs=2, verbose=0, callbacks=rec,
              save_dir=str(tmp_path / "ck"), save_freq=2)
    assert rec.events[0] == ("train_begin", ["batch_size", "epochs", "metrics", "steps", "verbose"])
    assert rec.events[1:5] == [("epoch_begin", 0), ("batch_end", 0, 16, True), ("batch_end", 1, 16, True),
                               ("eval_end", ["acc", "batch_size", "loss", "step"])]
    assert rec.events[-1] == ("train_end",)
    assert rec.model is model
    # ModelCheckpoint: epoch 0 (0 % 2 == 0) and final; not epoch 1
    assert sorted(os.listdir(tmp_path / "ck")) == ["0.pdopt", "0.pdparams", "final.pdopt", "final.pdparams"]
    assert "save checkpoint at" in capsys.readouterr().out
    with pytest.raises(TypeError, match="Callback"):
        model.fit(Blobs(8), verbose=0, callbacks=[object()])


def test_early_stopping(tmp_path, capsys):
    model = make_model(lr=0.0)  # nothing improves
    stop = paddle.callbacks.EarlyStopping(monitor="loss", mode="min", patience=1, verbose=1, save_best_model=True)
    rec = Recorder()
    model.fit(Blobs(32, 1), Blobs(16, 2), batch_size=16, epochs=10, verbose=0, callbacks=[stop, rec],
              save_dir=str(tmp_path))
    epochs = [e for e in rec.events if e[0] == "epoch_begin"]
    assert len(epochs) == 3  # best at 1, no gain at 2 (wait 1), at 3 (wait 2 > patience 1): stop
    out = capsys.readouterr().out
    assert "Epoch 3: Early stopping." in out and "Best checkpoint has been saved at" in out
    assert os.path.exists(tmp_path / "best_model.pdparams")
    # mode auto + 'acc' watches for a rise; baseline unreached stops at once with patience 0
    acc_stop = paddle.callbacks.EarlyStopping(monitor="acc", patience=0, baseline=1.01, save_best_model=False,
                                              verbose=0)
    assert acc_stop.monitor_op == np.greater
    rec = Recorder()
    make_model().fit(Blobs(32, 1), Blobs(16, 2), batch_size=16, epochs=5, verbose=0, callbacks=[acc_stop, rec])
    assert len([e for e in rec.events if e[0] == "epoch_begin"]) == 1


def test_lr_scheduler_callback_steps_by_step_or_by_epoch():
    def sched_model(m):
        return paddle.optimizer.SGD(learning_rate=paddle.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5),
                                    parameters=m.parameters())
    model = make_model(optimizer=sched_model)
    model.fit(Blobs(32, 1), batch_size=16, epochs=2, verbose=0)  # default: by_step, 4 steps
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** 4)
    model = make_model(optimizer=sched_model)
    model.fit(Blobs(32, 1), batch_size=16, epochs=2, verbose=0,
              callbacks=[paddle.callbacks.LRScheduler(by_step=False, by_epoch=True)])
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** 2)
    with pytest.raises(ValueError, match="mutually exclusive"):
        paddle.callbacks.LRScheduler(by_step=True, by_epoch=True)


def test_reduce_lr_on_plateau(capsys):
    model = make_model(lr=0.0)
    model._optimizer.set_lr(0.4)
    cb = paddle.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_lr=0.1, verbose=1)
    model.fit(Blobs(32, 1), Blobs(16, 2), batch_size=32, epochs=1, verbose=0, callbacks=cb)
    assert model._optimizer.get_lr() == pytest.approx(0.4)
    # the loss of a model that does not learn stays put: each further evaluation is a plateau
    model._optimizer.set_lr(0.0)
    cb2 = paddle.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_lr=0.0, verbose=1)
    model._optimizer.set_lr(1e-12)
    model.fit(Blobs(32, 1), Blobs(16, 2), batch_size=32, epochs=3, verbose=0, callbacks=cb2)
    assert model._optimizer.get_lr() == pytest.approx(1e-12 * 0.25)
    assert "ReduceLROnPlateau reducing learning rate to" in capsys.readouterr().out
    with pytest.raises(ValueError, match="factor"):
        paddle.callbacks.ReduceLROnPlateau(factor=1.0)


def test_metrics_logger_writes_crews_metrics_lines(tmp_path):
    path = tmp_path / "run" / "metrics.jsonl"
    model = make_model()
    model.fit(Blobs(32, 1), Blobs(16, 2), batch_size=16, epochs=2, verbose=0,
              callbacks=[paddle.callbacks.MetricsLogger(str(path))])
    lines = [json.loads(s) for s in path.read_text().splitlines()]
    assert [r["type"] for r in lines] == ["step", "step", "epoch", "eval"] * 2
    step = lines[0]
    assert step["epoch"] == 0 and step["step"] == 0 and step["lr"] == pytest.approx(0.05)
    assert isinstance(step["loss"], float) and "acc" in step
    assert lines[2]["steps"] == 2 and lines[2]["samples_per_s"] > 0 and "train_seconds" in lines[2]
    assert set(lines[3]) >= {"type", "epoch", "loss", "acc"}


def test_progress_bar_formats_like_paddles(capsys):
    from crew.hapi.progressbar import ProgressBar
    bar = ProgressBar(num=938, verbose=2)
    bar.update(10, [("loss", [0.45734]), ("acc", 0.8375), ("small", 1e-5)])
    line = capsys.readouterr().out
    assert line.startswith("step  10/938 - loss: 0.4573 - acc: 0.8375 - small: 1.0000e-05 - ")
    assert line.rstrip().endswith("/step")


DIST_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import crew as paddle
    import crew.distributed as dist
    sys.path.insert(0, {test_dir!r})
    from test_hapi_model import Blobs, make_model

    model = make_model()
    model.fit(Blobs(70, 1), Blobs(51, 2), batch_size=8, epochs=2, log_freq=1, verbose=2)
    result = model.evaluate(Blobs(51, 2), batch_size=8, verbose=0)
    preds = model.predict(Blobs(51, 2), batch_size=8, stack_outputs=True, verbose=0)
    rank = dist.get_rank()
    np.save(f"params{{rank}}.npy", np.concatenate([p.numpy().ravel() for p in model.parameters()]))
    print(f"RESULT rank={{rank}} world={{dist.get_world_size()}} loss={{result['loss'][0]:.6f}} "
          f"acc={{result['acc']:.4f}} "
          f"predicted={{preds[0].shape[0]}}", flush=True)
""")


def test_fit_on_two_ranks_under_launch(tmp_path):
    script = tmp_path / "fit2.py"
    script.write_text(DIST_SCRIPT.format(test_dir=os.path.dirname(os.path.abspath(__file__))))
    launcher_vars = ("CREW_RANK", "PADDLE_", "CREW_WORLD", "CREW_MASTER")
    env = {k: v for k, v in os.environ.items() if not k.startswith(launcher_vars)}
    r = subprocess.run([sys.executable, "-m", "crew.distributed.launch", "--devices=0,1", str(script)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    log0 = (tmp_path / "log" / "workerlog.0").read_text()
    log1 = (tmp_path / "log" / "workerlog.1").read_text()
    # DistributedBatchSampler by itself: 35 samples per rank -> 5 steps of 8
    assert "Epoch 1/2" in log0 and "step 5/5 - loss:" in log0
    # evaluation gathers both ranks and drops the padding: exactly the 51 samples
    assert log0.count("Eval samples: 51") == 2
    # rank 1 logs nothing of the loop
    assert "Epoch" not in log1 and "step" not in log1 and "Eval" not in log1
    results = sorted(line for line in (log0 + log1).splitlines() if line.startswith("RESULT"))
    assert len(results) == 2 and all("world=2" in s and "predicted=51" in s for s in results)
    # metrics over the gathered batches, the loss averaged over the ranks: callbacks watching
    # either decide alike on every rank
    assert results[0].split("loss=")[1] == results[1].split("loss=")[1]
    # DataParallel by itself: both ranks hold the same parameters after training
    np.testing.assert_array_equal(np.load(tmp_path / "params0.npy"), np.load(tmp_path / "params1.npy"))


def test_accumulate_grad_batches_updates_once_per_group():
    data = Blobs(32, 5)
    model = make_model(lr=0.1, metrics=False)
    ref = make_model(lr=0.1, metrics=False)  # same seed: same start
    model.fit(data, batch_size=16, epochs=1, shuffle=False, verbose=0, accumulate_grad_batches=2)
    total = None
    for lo in (0, 16):
        x, y = paddle.to_tensor(data.x[lo:lo + 16]), paddle.to_tensor(data.y[lo:lo + 16])
        loss = nn.CrossEntropyLoss()(ref.network(x), y)
        total = loss if total is None else total + loss
    total.backward()
    ref._optimizer.step()
    for a, b in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def test_evaluate_with_num_iters_and_verbose_bar(capsys):
    model = make_model()
    result = model.evaluate(Blobs(64, 2), batch_size=8, num_iters=3, verbose=1)
    out = capsys.readouterr().out
    assert "Eval begin..." in out and "Eval samples: 24" in out
    assert "step 3/3 [" in out and set(result) == {"loss", "acc"}


def test_callbacks_crew_does_not_have_say_what_to_use():
    with pytest.raises(AttributeError, match="MetricsLogger"):
        paddle.callbacks.VisualDL  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        paddle.callbacks.Nope  # noqa: B018
