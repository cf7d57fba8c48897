"""paddle.Model (hapi): the high-level training loop of Paddle 2.4, over crew's layers.

    model = paddle.Model(MyNet(), inputs=InputSpec([None, 1, 28, 28], 'float32', 'x'))
    model.prepare(paddle.optimizer.Adam(parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    model.fit(train_dataset, eval_dataset, epochs=2, batch_size=64, verbose=1)
    model.evaluate(eval_dataset)          # {'loss': [...], 'acc': ...}
    model.save('checkpoints/mnist')       # mnist.pdparams + mnist.pdopt

Under crew.distributed.launch (world size > 1) the Model joins the job (init_parallel_env),
trains through DataParallel, reads its data through DistributedBatchSampler, gathers the
evaluation outputs of all ranks for the metrics, and prints and saves on rank 0 only.
"""
import inspect
import os
import warnings

import numpy as np

from .. import _C
from .. import io
from ..distributed.parallel_env import ParallelEnv
from ..metric import Metric
from ..nn.layer import Layer
from ..tensor_ops import no_grad
from .callbacks import EarlyStopping, config_callbacks
from .model_summary import summary as _summary


_SCALER_KEYS = ("init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps", "decr_every_n_nan_or_inf",
                "use_dynamic_loss_scaling")


def _amp_settings(amp_configs):
    """Model.prepare's amp_configs as {level, dtype, white, black, scaler}, or None for float32."""
    if amp_configs is None:
        return None
    configs = {"level": amp_configs} if isinstance(amp_configs, str) else dict(amp_configs)
    level = configs.pop("level", "O1")
    if level not in ("O0", "O1", "O2"):
        raise ValueError(f"Model.prepare: amp_configs level must be 'O0', 'O1' or 'O2', got {level!r}")
    settings = {"level": level, "dtype": configs.pop("dtype", "float16"),
                "white": configs.pop("custom_white_list", None), "black": configs.pop("custom_black_list", None),
                "scaler": {k: configs.pop(k) for k in _SCALER_KEYS if k in configs}}
    configs.pop("use_fp16_guard", None)  # static-graph only in Paddle
    if configs:
        raise ValueError(f"Model.prepare: amp_configs has unknown keys {sorted(configs)}; accepted: level, "
                         f"dtype, custom_white_list, custom_black_list, {', '.join(_SCALER_KEYS)}")
    return None if level == "O0" else settings


def _to_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _as_tensor(x):
    return x if isinstance(x, _C.Tensor) else _C.to_tensor(np.asarray(x))


def _forward_arity(network):
    """How many inputs forward takes (Paddle counts its positional parameters)."""
    try:
        params = inspect.signature(network.forward).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
        return 1
    return max(1, sum(1 for p in params if p.kind in kinds))


class Model:
    def __init__(self, network, inputs=None, labels=None):
        if not isinstance(network, Layer):
            raise TypeError(f"Model: network must be a crew.nn.Layer, got {type(network).__name__}")
        self.network = network
        self._inputs = _to_list(inputs) or None
        self._labels = _to_list(labels) or None
        self._num_inputs = len(self._inputs) if self._inputs else _forward_arity(network)
        self._loss = None
        self._metrics = []
        self._optimizer = None
        self._amp = None
        self._scaler = None
        self.stop_training = False
        self._merge_count = {}
        self._total_size = None
        self._nranks = ParallelEnv().world_size
        self._ddp = None
        if self._nranks > 1:
            from .. import distributed as dist
            from ..parallel import DataParallel
            if not dist.is_initialized():
                dist.init_parallel_env()
            self._ddp = DataParallel(network)

    # ---- set-up ----
    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None):
        """amp_configs (Paddle's): None or 'O0' (float32), 'O1', 'O2', or a dict with 'level'
        and any of GradScaler's arguments, 'custom_white_list', 'custom_black_list' and (crew)
        'dtype' ('float16', Paddle's, or 'bfloat16'). train_batch then runs forward and loss
        under crew.amp.auto_cast and steps through a GradScaler; O2 decorates the network and
        the optimizer (crew.amp.decorate)."""
        self._amp = _amp_settings(amp_configs)
        if loss is not None and not isinstance(loss, Layer) and not callable(loss):
            raise TypeError("'loss' must be sub classes of `paddle.nn.Layer` or any callable function.")
        for m in _to_list(metrics):
            if not isinstance(m, Metric):
                raise TypeError(f"{type(m).__name__} is not sub class of Metric")
        if self._amp is not None and self._amp["level"] == "O2":
            from .. import amp
            amp.decorate(self.network, optimizer, level="O2", dtype=self._amp["dtype"])
        self._scaler = None
        if self._amp is not None:
            from .. import amp
            self._scaler = amp.GradScaler(**self._amp["scaler"])
        self._optimizer = optimizer
        self._loss = loss
        self._metrics = _to_list(metrics)

    @property
    def _lr_scheduler(self):
        lr = getattr(self._optimizer, "_learning_rate", None)
        return lr if isinstance(lr, _C.optimizer.lr.LRScheduler) else None

    def parameters(self, *args, **kwargs):
        return self.network.parameters(*args, **kwargs)

    def _metrics_name(self):
        names = ["loss"] if self._loss else []
        for m in self._metrics:
            names.extend(_to_list(m.name()))
        return names

    # ---- one batch ----
    def train_batch(self, inputs, labels=None, update=True):
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("model not ready, please call `model.prepare()` first")
        self.network.train()
        inputs = [_as_tensor(x) for x in _to_list(inputs)]
        labels = [_as_tensor(y) for y in _to_list(labels)]
        with self._auto_cast():
            outputs = (self._ddp or self.network)(*inputs)
            losses = _to_list(self._loss(*(_to_list(outputs) + labels)))
        final = losses[0]
        for extra in losses[1:]:
            final = final + extra
        if self._scaler is None:
            final.backward()
        else:
            self._scaler.scale(final).backward()
        if update:
            if self._scaler is None:
                self._optimizer.step()
            else:
                self._scaler.minimize(self._optimizer)
            self._optimizer.clear_grad()
        metrics = self._update_metrics(outputs, labels)
        loss_values = [loss.numpy() for loss in losses]
        return (loss_values, metrics) if metrics else loss_values

    def _auto_cast(self):
        from .. import amp
        if self._amp is None:
            return amp.auto_cast(enable=False)
        return amp.auto_cast(level=self._amp["level"], dtype=self._amp["dtype"],
                             custom_white_list=self._amp["white"], custom_black_list=self._amp["black"])

    def eval_batch(self, inputs, labels=None):
        self.network.eval()
        inputs = [_as_tensor(x) for x in _to_list(inputs)]
        labels = [_as_tensor(y) for y in _to_list(labels)]
        with no_grad():
            outputs = self.network(*inputs)
            losses = _to_list(self._loss(*(_to_list(outputs) + labels))) if self._loss and labels else []
            if self._nranks > 1:
                losses = [self._mean_over_ranks(loss) for loss in losses]
                outputs, labels = self._gather(_to_list(outputs), labels, "eval")
            metrics = self._update_metrics(outputs, labels)
        loss_values = [loss.numpy() for loss in losses]
        if self._loss and metrics:
            return loss_values, metrics
        return loss_values if self._loss else metrics

    def predict_batch(self, inputs):
        self.network.eval()
        inputs = [_as_tensor(x) for x in _to_list(inputs)]
        with no_grad():
            outputs = _to_list(self.network(*inputs))
            if self._nranks > 1:
                outputs, _ = self._gather(outputs, [], "test")
        return [o.numpy() for o in outputs]

    def _update_metrics(self, outputs, labels):
        results = []
        for metric in self._metrics:
            outs = _to_list(metric.compute(*(_to_list(outputs) + labels)))
            results.append(metric.update(*[o.numpy() if isinstance(o, _C.Tensor) else o for o in outs]))
        return results

    def _mean_over_ranks(self, loss):
        """Every rank logs the same evaluation loss, so that callbacks watching it
        (EarlyStopping, ReduceLROnPlateau) decide alike on all ranks: a rank that stopped
        alone would leave the others waiting in their next all_reduce."""
        from .. import distributed as dist
        loss = loss.clone()
        dist.all_reduce(loss)
        return loss * (1.0 / self._nranks)

    def _gather(self, outputs, labels, mode):
        """All ranks' batches, concatenated; the samples DistributedBatchSampler repeated to
        even out the ranks are cut from the last batch (Paddle's merge count)."""
        from .. import distributed as dist

        def gather(t):
            parts = []
            dist.all_gather(parts, t)
            return np.concatenate([p.numpy() for p in parts], axis=0)
        outs = [gather(o) for o in outputs]
        labs = [gather(y) for y in labels]
        samples = outs[0].shape[0] if outs else 0
        seen = self._merge_count.get(mode + "_total", 0)
        if self._total_size is not None and seen + samples >= self._total_size:
            keep = self._total_size - seen
            outs = [o[:keep] for o in outs]
            labs = [y[:keep] for y in labs]
            self._merge_count[mode + "_total"] = 0
            self._merge_count[mode + "_batch"] = keep
        else:
            self._merge_count[mode + "_total"] = seen + samples
            self._merge_count[mode + "_batch"] = samples
        return [_C.to_tensor(o) for o in outs], [_C.to_tensor(y) for y in labs]

    # ---- loops ----
    def _loader(self, data, batch_size, shuffle, drop_last, num_workers):
        if data is None or isinstance(data, io.DataLoader):
            return data
        if hasattr(data, "__getitem__") and hasattr(data, "__len__") and not isinstance(data, (list, tuple)):
            sampler = io.DistributedBatchSampler(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
            return io.DataLoader(data, batch_sampler=sampler, num_workers=num_workers)
        return data  # any iterable of batches

    @staticmethod
    def _len(loader):
        try:
            return len(loader)
        except TypeError:
            return None

    def _run_one_epoch(self, loader, callbacks, mode, logs=None):
        logs = {} if logs is None else logs
        outputs = []
        if mode != "predict":
            for metric in self._metrics:
                metric.reset()
        self._merge_count = {}
        steps = self._len(loader)
        for step, data in enumerate(loader):
            if self._num_iters is not None and step >= self._num_iters:
                break
            data = _to_list(data)
            batch_size = data[0].shape[0] if data and hasattr(data[0], "shape") else 1
            callbacks.on_batch_begin(mode, step, logs)
            n = self._num_inputs
            if mode == "predict":
                outputs.append(self.predict_batch(data[:n]))
            else:
                if mode == "train":
                    last = steps is not None and step + 1 == steps
                    update = (step + 1) % self._accumulate == 0 or last
                    outs = self.train_batch(data[:n], data[n:], update)
                else:
                    outs = self.eval_batch(data[:n], data[n:])
                self._log_metrics(outs, logs)
            logs["step"] = step
            merged = self._merge_count.get(("test" if mode == "predict" else mode) + "_batch", 0)
            logs["batch_size"] = batch_size * self._nranks if mode == "train" or merged <= 0 else merged
            callbacks.on_batch_end(mode, step, logs)
        return (logs, outputs) if mode == "predict" else logs

    def _log_metrics(self, outs, logs):
        if self._metrics and self._loss:
            values = [[float(np.asarray(x).reshape(-1)[0]) for x in outs[0]]]
        elif self._loss:
            values = [[float(np.asarray(x).reshape(-1)[0]) for x in outs]]
        else:
            values = []
        for metric in self._metrics:
            values.extend(_to_list(metric.accumulate()))
        for k, v in zip(self._metrics_name(), values):
            logs[k] = v

    def _dataset_size(self, data):
        if self._nranks > 1 and data is not None and not isinstance(data, io.DataLoader):
            try:
                return len(data)
            except TypeError:
                return None
        return None

    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs=1, eval_freq=1, log_freq=10,
            save_dir=None, save_freq=1, verbose=2, drop_last=False, shuffle=True, num_workers=0, callbacks=None,
            accumulate_grad_batches=1, num_iters=None):
        if train_data is None:
            raise ValueError("Model.fit: train_data must be given")
        train_loader = self._loader(train_data, batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, batch_size, False, False, num_workers)
        self._accumulate = max(1, int(accumulate_grad_batches))
        self._num_iters = None
        steps = self._len(train_loader)
        if num_iters is not None and steps:
            epochs = num_iters // steps + 1
            steps = min(num_iters, steps)
        self.stop_training = False
        cbks = config_callbacks(callbacks, model=self, batch_size=batch_size, epochs=epochs, steps=steps,
                                log_freq=log_freq, save_freq=save_freq, save_dir=save_dir, verbose=verbose,
                                metrics=self._metrics_name())
        if any(isinstance(k, EarlyStopping) for k in cbks) and eval_loader is None:
            warnings.warn("EarlyStopping needs validation data.")
        cbks.on_begin("train")
        logs = {}
        done = 0
        for epoch in range(epochs):
            sampler = getattr(train_loader, "batch_sampler", None)
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)
            if num_iters is not None:
                self._num_iters = num_iters - done
            cbks.on_epoch_begin(epoch)
            logs = self._run_one_epoch(train_loader, cbks, "train")
            done += (logs.get("step", -1) + 1)
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and epoch % eval_freq == 0:
                self._run_eval(eval_loader, eval_data, cbks)
                if self.stop_training:
                    break
            if num_iters is not None and done >= num_iters:
                break
        self._num_iters = None
        cbks.on_end("train", logs)

    def _run_eval(self, loader, data, cbks):
        saved, self._num_iters = self._num_iters, None
        self._total_size = self._dataset_size(data)
        cbks.on_begin("eval", {"steps": self._len(loader), "metrics": self._metrics_name()})
        logs = self._run_one_epoch(loader, cbks, "eval")
        cbks.on_end("eval", logs)
        self._num_iters = saved
        return logs

    def evaluate(self, eval_data, batch_size=1, log_freq=10, verbose=2, num_workers=0, callbacks=None,
                 num_iters=None):
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq, verbose=verbose,
                                metrics=self._metrics_name())
        logs = self._run_eval(loader, eval_data, cbks) if num_iters is None else None
        if logs is None:
            self._num_iters = num_iters
            self._total_size = self._dataset_size(eval_data)
            cbks.on_begin("eval", {"steps": min(num_iters, self._len(loader) or num_iters),
                                   "metrics": self._metrics_name()})
            logs = self._run_one_epoch(loader, cbks, "eval")
            cbks.on_end("eval", logs)
            self._num_iters = None
        return {k: logs[k] for k in self._metrics_name() if k in logs}

    def predict(self, test_data, batch_size=1, num_workers=0, stack_outputs=False, verbose=1, callbacks=None):
        """A list with one entry per network output: the per-batch NumPy arrays, or (with
        stack_outputs) one array of all samples."""
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        self._num_iters = None
        self._total_size = self._dataset_size(test_data)
        cbks = config_callbacks(callbacks, model=self, verbose=verbose, metrics=self._metrics_name(), mode="test")
        cbks.on_begin("predict", {"steps": self._len(loader)})
        logs, outputs = self._run_one_epoch(loader, cbks, "predict")
        outputs = [list(o) for o in zip(*outputs)]
        if stack_outputs:
            outputs = [np.vstack(o) for o in outputs]
        cbks.on_end("predict", logs)
        return outputs

    _num_iters = None
    _accumulate = 1

    # ---- checkpoints ----
    def save(self, path, training=True):
        """path.pdparams (the network's state_dict) and, when training and an optimizer is
        set, path.pdopt; rank 0 writes. training=False writes path.pdparams only (crew has
        no inference-program format)."""
        if ParallelEnv().local_rank != 0 or ParallelEnv().rank != 0:
            return
        dirname = os.path.dirname(path)
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        _C.save(self.network.state_dict(), path + ".pdparams")
        if training and self._optimizer is not None:
            state = self._optimizer.state_dict()
            if state:
                _C.save(state, path + ".pdopt")

    def load(self, path, skip_mismatch=False, reset_optimizer=False):
        path, ext = os.path.splitext(path)
        if ext not in ("", ".pdparams", ".pdopt", ".pdmodel"):
            path = path + ext
        if not os.path.exists(path + ".pdparams"):
            raise FileNotFoundError(f"Model.load: {path}.pdparams does not exist")
        state = _C.load(path + ".pdparams")
        matched = {}
        for key, param in self.network.state_dict().items():
            saved = state.get(key)
            err = None
            if saved is None:
                err = f"{key} is not found in the providing file."
            elif list(saved.shape) != list(param.shape):
                err = f"{key} receives a shape {list(saved.shape)}, but the expected shape is {list(param.shape)}."
            if err is not None:
                if not skip_mismatch:
                    raise ValueError(err)
                warnings.warn(f"Skip loading for {key}. {err}")
                continue
            matched[key] = saved
        self.network.set_state_dict(matched, strict=False)
        if not reset_optimizer and self._optimizer is not None and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(_C.load(path + ".pdopt"))

    def summary(self, input_size=None, dtype=None):
        if input_size is None and not self._inputs:
            raise ValueError("Model.summary: 'input_size' or the Model's inputs must be set")
        return _summary(self.network, input_size if input_size is not None else self._inputs, dtypes=dtype)
