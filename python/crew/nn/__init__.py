"""crew.nn: Paddle's paddle.nn (Layer, the built-in layers, functional)."""
from . import functional
from .layer import Layer
from .._C.optimizer import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .layers import (AdaptiveAvgPool2D, AvgPool2D, BatchNorm2D, Conv2D, Dropout, Embedding, Flatten,
                     GELU, LayerNorm, Linear, MaxPool2D, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .sync_batch_norm import SyncBatchNorm
from . import initializer
from .containers import LayerDict, LayerList, ParameterList
from .composed import (AdaptiveMaxPool2D, AvgPool1D, Dropout2D, GroupNorm, Hardswish, Identity,
                       InstanceNorm2D, LeakyReLU, MaxPool1D, Pad2D, PReLU, ReLU6, Silu, Softplus,
                       Upsample, UpsamplingBilinear2D, UpsamplingNearest2D)
from .attention import MultiHeadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import (BiRNN, GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCellBase, SimpleRNN,
                  SimpleRNNCell)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)

__all__ = ["Layer", "functional", "Conv2D", "Linear", "MaxPool2D", "AvgPool2D", "BatchNorm2D",
           "Dropout", "Flatten", "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "Sequential",
           "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "SyncBatchNorm",
           "LayerNorm", "Embedding", "AdaptiveAvgPool2D", "CrossEntropyLoss", "MSELoss", "L1Loss",
           "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "KLDivLoss", "initializer",
           "LayerList", "LayerDict", "ParameterList", "Identity", "ReLU6", "Silu", "Hardswish",
           "LeakyReLU", "Softplus", "PReLU", "Dropout2D", "GroupNorm", "InstanceNorm2D", "Pad2D",
           "Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D", "AdaptiveMaxPool2D",
           "MaxPool1D", "AvgPool1D", "Conv1D", "Conv2DTranspose", "Conv3D"]
from .layers_extra import (AdaptiveAvgPool1D, AlphaDropout, AvgPool1D, BatchNorm, BatchNorm1D,  # noqa: E402
                           BatchNorm3D, Conv1D, Conv1DTranspose, Conv2DTranspose, CosineSimilarity, ELU,
                           Hardsigmoid, Hardtanh, LocalResponseNorm, LogSoftmax, MarginRankingLoss, MaxPool1D,
                           Mish, PairwiseDistance, PixelShuffle, SELU, Softsign, Swish, Tanhshrink)
from .layers_extra import GroupNorm, InstanceNorm2D  # noqa: E402,F811
from . import layers_extra as _layers_extra  # noqa: E402
from .conv3d import Conv3D  # noqa: E402
from .loss_embedding import CosineEmbeddingLoss, HingeEmbeddingLoss, TripletMarginLoss  # noqa: E402
from .composed import ZeroPad2D  # noqa: E402
from .layers_extra import Unfold  # noqa: E402
__all__ += [n for n in _layers_extra.__all__ if n not in __all__]
__all__ += ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
            "TransformerDecoder", "Transformer"]
__all__ += ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "BiRNN", "SimpleRNN",
            "LSTM", "GRU"]
__all__ += ["CosineEmbeddingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "ZeroPad2D"]
