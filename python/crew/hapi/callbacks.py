"""paddle.callbacks: the hooks Model.fit / evaluate / predict call (Paddle 2.4's hapi).

fit adds ProgBarLogger (verbose > 0), ModelCheckpoint and LRScheduler unless given; a
callback sees self.model (the Model) and self.params ({'batch_size', 'epochs', 'steps',
'verbose', 'metrics'}). Setting model.stop_training = True ends fit after the epoch.
"""
import json
import numbers
import os
import time
import warnings

import numpy as np

from ..distributed.parallel_env import ParallelEnv
from .progressbar import ProgressBar


def _rank0():
    return ParallelEnv().local_rank == 0 and ParallelEnv().rank == 0


def config_callbacks(callbacks=None, model=None, batch_size=None, epochs=None, steps=None, log_freq=2,
                     verbose=2, save_freq=1, save_dir=None, metrics=None, mode="train"):
    cbks = callbacks or []
    cbks = list(cbks) if isinstance(cbks, (list, tuple)) else [cbks]
    for c in cbks:
        if not isinstance(c, Callback):
            raise TypeError(f"callbacks: expected crew.callbacks.Callback objects, got {type(c).__name__}")
    if not any(isinstance(k, ProgBarLogger) for k in cbks) and verbose:
        cbks = [ProgBarLogger(log_freq, verbose=verbose)] + cbks
    if not any(isinstance(k, ModelCheckpoint) for k in cbks):
        cbks = cbks + [ModelCheckpoint(save_freq, save_dir)]
    for k in cbks:
        if isinstance(k, EarlyStopping):
            k.save_dir = save_dir
    if not any(isinstance(k, LRScheduler) for k in cbks):
        cbks = cbks + [LRScheduler()]
    cbk_list = CallbackList(cbks)
    cbk_list.set_model(model)
    metrics = (metrics or []) if mode != "test" else []
    cbk_list.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                         "metrics": metrics})
    return cbk_list


class CallbackList:
    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])
        self.params = {}
        self.model = None

    def append(self, callback):
        self.callbacks.append(callback)

    def __iter__(self):
        return iter(self.callbacks)

    def set_params(self, params):
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)

    def on_begin(self, mode, logs=None):
        self._call(f"on_{mode}_begin", logs)

    def on_end(self, mode, logs=None):
        self._call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch=None, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch=None, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode, step=None, logs=None):
        self._call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode, step=None, logs=None):
        self._call(f"on_{mode}_batch_end", step, logs)


class Callback:
    """Base class: override the on_* hooks you need (all do nothing here)."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_eval_begin(self, logs=None):
        pass

    def on_eval_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, step, logs=None):
        pass

    def on_train_batch_end(self, step, logs=None):
        pass

    def on_eval_batch_begin(self, step, logs=None):
        pass

    def on_eval_batch_end(self, step, logs=None):
        pass

    def on_predict_batch_begin(self, step, logs=None):
        pass

    def on_predict_batch_end(self, step, logs=None):
        pass


class ProgBarLogger(Callback):
    """Prints 'Epoch 1/2', then every log_freq steps 'step  10/938 - loss: ... - acc: ...';
    'Eval begin...' / 'Eval samples: N' around evaluation. Rank 0 only."""

    def __init__(self, log_freq=1, verbose=2):
        super().__init__()
        self.epochs = None
        self.steps = None
        self.progbar = None
        self.verbose = verbose
        self.log_freq = log_freq

    def _is_print(self):
        return self.verbose and _rank0()

    def on_train_begin(self, logs=None):
        self.epochs = self.params["epochs"]
        self.train_metrics = self.params["metrics"]
        if self._is_print():
            print("The loss value printed in the log is the current step, and the metric is the average "
                  "value of previous steps.", flush=True)

    def on_epoch_begin(self, epoch=None, logs=None):
        self.steps = self.params["steps"]
        self.epoch = epoch
        self.train_step = 0
        if self.epochs and self._is_print():
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)
        self.train_progbar = ProgressBar(num=self.steps, verbose=self.verbose)

    def _updates(self, logs, mode):
        metrics = getattr(self, f"{mode}_metrics")
        values = [(k, logs[k]) for k in metrics if k in logs]
        getattr(self, f"{mode}_progbar").update(getattr(self, f"{mode}_step"), values)

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        if self._is_print() and self.train_step % self.log_freq == 0:
            if self.steps is None or self.train_step < self.steps:
                self._updates(logs or {}, "train")

    def on_epoch_end(self, epoch, logs=None):
        if self._is_print() and self.steps is not None:
            self._updates(logs or {}, "train")

    def on_eval_begin(self, logs=None):
        logs = logs or {}
        self.eval_steps = logs.get("steps")
        self.eval_metrics = logs.get("metrics", [])
        self.eval_step = 0
        self.evaled_samples = 0
        self.eval_progbar = ProgressBar(num=self.eval_steps, verbose=self.verbose)
        if self._is_print():
            print("Eval begin...", flush=True)

    def on_eval_batch_end(self, step, logs=None):
        logs = logs or {}
        self.eval_step += 1
        self.evaled_samples += logs.get("batch_size", 1)
        if self._is_print() and self.eval_step % self.log_freq == 0:
            if self.eval_steps is None or self.eval_step < self.eval_steps:
                self._updates(logs, "eval")

    def on_eval_end(self, logs=None):
        if self._is_print() and self.eval_steps is not None:
            self._updates(logs or {}, "eval")
            print(f"Eval samples: {self.evaled_samples}", flush=True)

    def on_predict_begin(self, logs=None):
        logs = logs or {}
        self.test_steps = logs.get("steps")
        self.test_metrics = []
        self.test_step = 0
        self.tested_samples = 0
        self.test_progbar = ProgressBar(num=self.test_steps, verbose=self.verbose)
        if self._is_print():
            print("Predict begin...", flush=True)

    def on_predict_batch_end(self, step, logs=None):
        logs = logs or {}
        self.test_step += 1
        self.tested_samples += logs.get("batch_size", 1)
        if self._is_print() and self.test_step % self.log_freq == 0:
            if self.test_steps is None or self.test_step < self.test_steps:
                self._updates(logs, "test")

    def on_predict_end(self, logs=None):
        if self._is_print() and self.test_steps is not None:
            self._updates(logs or {}, "test")
            print(f"Predict samples: {self.tested_samples}", flush=True)


class ModelCheckpoint(Callback):
    """Saves save_dir/<epoch> every save_freq epochs and save_dir/final at the end (rank 0)."""

    def __init__(self, save_freq=1, save_dir=None):
        super().__init__()
        self.save_freq = save_freq
        self.save_dir = save_dir
        self.epoch = 0

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def _is_save(self):
        return self.model is not None and self.save_dir and _rank0()

    def on_epoch_end(self, epoch, logs=None):
        if self._is_save() and self.epoch % self.save_freq == 0:
            path = f"{self.save_dir}/{epoch}"
            print(f"save checkpoint at {os.path.abspath(path)}", flush=True)
            self.model.save(path)

    def on_train_end(self, logs=None):
        if self._is_save():
            path = f"{self.save_dir}/final"
            print(f"save checkpoint at {os.path.abspath(path)}", flush=True)
            self.model.save(path)


class LRScheduler(Callback):
    """Steps the optimizer's learning-rate schedule after every batch (by_step) or epoch."""

    def __init__(self, by_step=True, by_epoch=False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("by_step option is mutually exclusive with by_epoch")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _step(self):
        sched = getattr(self.model, "_lr_scheduler", None) if self.model is not None else None
        if sched is not None:
            sched.step()

    def on_epoch_end(self, epoch, logs=None):
        if self.by_epoch:
            self._step()

    def on_train_batch_end(self, step, logs=None):
        if self.by_step:
            self._step()


def _monitored(logs, monitor, who):
    if logs is None or monitor not in logs:
        warnings.warn(f"Monitor of {who} should be loss or metric name.")
        return None
    current = logs[monitor]
    if isinstance(current, (list, tuple)):
        current = current[0]
    if isinstance(current, np.ndarray) and current.size == 1:
        current = current.item()
    return current if isinstance(current, numbers.Number) else None


class EarlyStopping(Callback):
    """Stops fit when the evaluated `monitor` has not improved by min_delta for more than
    `patience` evaluations; with save_best_model, saves save_dir/best_model at each best."""

    def __init__(self, monitor="loss", mode="auto", patience=0, verbose=1, min_delta=0, baseline=None,
                 save_best_model=True):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_best_model = save_best_model
        self.save_dir = None  # set by config_callbacks
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.")
            mode = "auto"
        if mode == "min" or (mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = np.less
            self.min_delta *= -1
        else:
            self.monitor_op = np.greater

    def on_train_begin(self, logs=None):
        self.wait_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op == np.less else -np.inf
            self.best_weights = None

    def on_eval_end(self, logs=None):
        current = _monitored(logs, self.monitor, "EarlyStopping")
        if current is None:
            return
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and self.save_dir is not None:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch > self.patience:
            self.model.stop_training = True
            if self.verbose > 0 and _rank0():
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.", flush=True)
                if self.save_best_model and self.save_dir is not None:
                    path = os.path.abspath(os.path.join(self.save_dir, "best_model"))
                    print(f"Best checkpoint has been saved at {path}", flush=True)
        self.stopped_epoch += 1


class ReduceLROnPlateau(Callback):
    """Multiplies a float learning rate by `factor` when the evaluated `monitor` has not improved
    for `patience` evaluations (then waits `cooldown` evaluations), never below min_lr."""

    def __init__(self, monitor="loss", factor=0.1, patience=10, verbose=1, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):
        super().__init__()
        self.monitor = monitor
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.factor, self.min_lr, self.min_delta = factor, min_lr, min_delta
        self.patience, self.verbose, self.cooldown = patience, verbose, cooldown
        self.mode = mode
        self.epoch = 0
        self._reset()

    def _reset(self):
        if self.mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {self.mode} is unknown, fallback to auto mode.")
            self.mode = "auto"
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_eval_end(self, logs=None):
        current = _monitored(logs, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if getattr(self.model, "_lr_scheduler", None) is not None:
            warnings.warn("ReduceLROnPlateau: expected a float learning rate, got an LRScheduler.")
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                self._reduce()
        self.epoch += 1

    def _reduce(self):
        opt = self.model._optimizer
        old_lr = opt.get_lr()
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            opt.set_lr(new_lr)
            if self.verbose > 0 and _rank0():
                print(f"\nEpoch {self.epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.", flush=True)
            self.cooldown_counter = self.cooldown
            self.wait = 0


class MetricsLogger(Callback):
    """Writes crew's metrics JSON lines (the format of train_cnn's --metrics, which `crew plot`
    reads): {"type": "step", "epoch", "step", "loss", "lr", <metrics>} every log_freq steps,
    {"type": "epoch", "epoch", "steps", "samples_per_s", "train_seconds", <metrics>} and
    {"type": "eval", "epoch", <metrics>}. Rank 0 only; no VisualDL needed."""

    def __init__(self, path="metrics.jsonl", log_freq=1):
        super().__init__()
        self.path = path
        self.log_freq = log_freq
        self._file = None
        self.epoch = 0

    def _write(self, record):
        if self._file is None:
            if not _rank0():
                return
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    @staticmethod
    def _values(logs):
        out = {}
        for k, v in (logs or {}).items():
            if k in ("step", "batch_size"):
                continue
            if isinstance(v, (list, tuple)) and len(v) == 1:
                v = v[0]
            if isinstance(v, np.ndarray) and v.size == 1:
                v = v.item()
            if isinstance(v, (numbers.Number, list)):
                out[k] = float(v) if isinstance(v, numbers.Number) else [float(x) for x in v]
        return out

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch
        self._samples = 0
        self._steps = 0
        self._start = time.time()

    def on_train_batch_end(self, step, logs=None):
        self._samples += (logs or {}).get("batch_size", 0)
        self._steps += 1
        if step % self.log_freq == 0:
            opt = getattr(self.model, "_optimizer", None)
            lr = {"lr": float(opt.get_lr())} if opt is not None else {}
            self._write({"type": "step", "epoch": self.epoch, "step": step, **self._values(logs), **lr})

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.time() - self._start
        self._write({"type": "epoch", "epoch": epoch, "steps": self._steps,
                     "samples_per_s": self._samples / seconds if seconds > 0 else 0.0,
                     "train_seconds": seconds, **self._values(logs)})

    def on_eval_end(self, logs=None):
        self._write({"type": "eval", "epoch": self.epoch, **self._values(logs)})

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None
