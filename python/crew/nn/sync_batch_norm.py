"""crew.nn.SyncBatchNorm: Paddle's paddle.nn.SyncBatchNorm over crew's C++ layer
(crew::SyncBatchNorm): in training, the batch statistics are those of every rank's batch
(all_reduce over the default group), so ranks of N/W samples under DataParallel train as
one process over N; eval uses the running statistics; before init_parallel_env or in a
world of one process it is BatchNorm2D. Parameters and buffers: weight, bias, _mean,
_variance (BatchNorm2D's names).
"""
from .. import _C
from .layer import CppLayer
from .layers import BatchNorm2D, _fixed

_n = _C.nn


class SyncBatchNorm(CppLayer):
    _norm = True

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):
        if data_format not in ("NC", "NCL", "NCHW", "NCDHW"):
            raise ValueError(f"SyncBatchNorm: data_format='{data_format}': crew supports channels "
                             "first (NC, NCL, NCHW, NCDHW)")
        super().__init__(_n.SyncBatchNorm(num_features, momentum, epsilon))
        _fixed(self, weight_attr, bias_attr)

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """Every BatchNorm2D of layer's tree synchronised, as Paddle's classmethod: each Python
        BatchNorm2D is replaced in its parent by a SyncBatchNorm sharing its C++ layer (so the
        parameters, buffers and their names are the same tensors), and a bare BatchNorm2D
        returns one. C++ layers holding BatchNorm2D sublayers (a bound C++ model) are converted
        in place: their BatchNorm2D layers get the sync and keep their type. A CppLayer
        subclass built from Python layers (resnet50's) has no C++ layer: its tree is walked."""
        if isinstance(layer, CppLayer) and getattr(layer, "_impl", None) is not None:
            _n.SyncBatchNorm.convert_sync_batchnorm(layer._impl)
            if isinstance(layer, BatchNorm2D):
                return cls._sharing(layer)
            return layer
        for name, sub in list(layer._sub_layers.items()):
            layer._sub_layers[name] = cls.convert_sync_batchnorm(sub)
        return layer

    @classmethod
    def _sharing(cls, bn):
        out = cls.__new__(cls)
        CppLayer.__init__(out, bn._impl)
        object.__setattr__(out, "training", bn.training)
        return out
