"""crew.nn: Paddle's paddle.nn (Layer, the built-in layers, functional)."""
from . import functional
from .layer import Layer
from .._C.optimizer import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .layers import (AdaptiveAvgPool2D, AvgPool2D, BatchNorm2D, Conv2D, Dropout, Embedding, Flatten,
                     GELU, LayerNorm, Linear, MaxPool2D, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .sync_batch_norm import SyncBatchNorm
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)

__all__ = ["Layer", "functional", "Conv2D", "Linear", "MaxPool2D", "AvgPool2D", "BatchNorm2D",
           "Dropout", "Flatten", "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "Sequential",
           "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "SyncBatchNorm",
           "LayerNorm", "Embedding", "AdaptiveAvgPool2D", "CrossEntropyLoss", "MSELoss", "L1Loss",
           "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "KLDivLoss"]
