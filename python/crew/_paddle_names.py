"""The everyday names of Paddle 2.4's public API, by namespace, and crew's coverage of them.

The list is what Paddle 2.4's API reference and its quick-start and distributed guides use
(tensor creation and math, nn, nn.functional, optimizer, io, metric, vision, distributed,
hapi, amp); rarely used corners (static graphs, sparse, complex, fft) are left out. It serves
two ends:

- a module of crew's that lacks a name answers with an AttributeError that says whether
  Paddle 2.4 has it (so a user knows it is crew's gap, not their typo);
- ``python3 -m crew._paddle_names`` prints the coverage table of docs/python.md, and
  tests/python/test_paddle_coverage.py keeps the count of supported names from falling.
"""
import importlib
import sys
import types

# namespace (as Paddle spells it) -> names. "paddle.Tensor" lists the Tensor's methods and
# properties.
NAMES = {
    "paddle": """
        to_tensor zeros ones full zeros_like ones_like full_like empty empty_like arange linspace
        eye rand randn randint randperm normal uniform bernoulli multinomial seed concat stack
        split chunk unbind reshape squeeze unsqueeze flatten transpose tile expand expand_as
        broadcast_to flip roll gather gather_nd scatter index_select masked_select where nonzero
        sort argsort topk argmax argmin max min amax amin sum mean prod std var median cumsum
        cumprod abs sqrt rsqrt square exp log log2 log10 log1p sin cos tan tanh sigmoid erf pow
        expm1 trunc asin acos atan sinh cosh asinh acosh atanh lerp masked_fill moveaxis
        count_nonzero nansum nanmean atan2 scatter_nd_add create_parameter bitwise_and bitwise_or
        bitwise_xor bitwise_not bincount histogram searchsorted bucketize kthvalue mode
        floor ceil round sign clip matmul mm bmm dot add subtract multiply divide floor_divide
        remainder maximum minimum equal not_equal greater_than greater_equal less_than less_equal
        equal_all allclose isclose isnan isinf isfinite logical_and logical_or logical_not
        logical_xor all any cast numel shape norm dist einsum outer t kron diag tril triu
        meshgrid unique logsumexp assign clone slice strided_slice take_along_axis
        put_along_axis repeat_interleave diff trace cross increment scale neg reciprocal
        no_grad grad set_grad_enabled is_grad_enabled set_device get_device
        is_compiled_with_cuda save load summary Model ParamAttr set_default_dtype
        get_default_dtype CPUPlace CUDAPlace CUDAPinnedPlace is_tensor in_dynamic_mode
        enable_static disable_static DataParallel Tensor float32 float64 float16 bfloat16 int32
        int64 uint8 bool""",
    "paddle.Tensor": """
        numpy item tolist shape dtype place stop_gradient grad backward clear_grad
        clear_gradient detach clone astype cast reshape transpose t T unsqueeze squeeze flatten
        sum mean max min argmax abs sqrt exp log pow matmul add subtract multiply divide add_
        scale_ zero_ fill_ clip clip_ set_value cpu cuda ndim size numel dim __getitem__
        __setitem__ __float__ __int__ __len__ __bool__ register_hook is_leaf name persistable
        gradient""",
    "paddle.nn": """
        Layer Linear Conv1D Conv2D Conv3D Conv1DTranspose Conv2DTranspose MaxPool1D MaxPool2D
        AvgPool1D AvgPool2D AdaptiveAvgPool1D AdaptiveAvgPool2D AdaptiveMaxPool2D BatchNorm
        BatchNorm1D BatchNorm2D BatchNorm3D LayerNorm GroupNorm InstanceNorm2D SyncBatchNorm
        LocalResponseNorm Dropout Dropout2D AlphaDropout Embedding Flatten Identity Pad2D
        Upsample UpsamplingBilinear2D UpsamplingNearest2D PixelShuffle ReLU ReLU6 LeakyReLU
        PReLU ELU GELU SELU Silu Swish Mish Sigmoid Tanh Softmax LogSoftmax Softplus Softsign
        Hardswish Hardsigmoid Hardtanh Tanhshrink LSTM GRU SimpleRNN LSTMCell GRUCell
        SimpleRNNCell RNN BiRNN MultiHeadAttention TransformerEncoderLayer TransformerEncoder
        TransformerDecoderLayer TransformerDecoder Transformer Sequential LayerList LayerDict
        ParameterList CrossEntropyLoss MSELoss L1Loss SmoothL1Loss BCELoss BCEWithLogitsLoss
        NLLLoss KLDivLoss MarginRankingLoss CosineSimilarity PairwiseDistance ClipGradByNorm
        ClipGradByGlobalNorm ClipGradByValue initializer functional HingeEmbeddingLoss
        CosineEmbeddingLoss TripletMarginLoss ZeroPad2D Unfold""",
    "paddle.nn.functional": """
        relu relu6 leaky_relu prelu elu gelu selu silu swish mish sigmoid tanh softmax
        log_softmax softplus softsign hardswish hardsigmoid hardtanh linear conv1d conv2d
        conv2d_transpose max_pool1d max_pool2d avg_pool1d avg_pool2d adaptive_avg_pool1d
        adaptive_avg_pool2d adaptive_max_pool2d dropout dropout2d batch_norm layer_norm
        instance_norm normalize embedding one_hot pad interpolate upsample pixel_shuffle
        cross_entropy softmax_with_cross_entropy mse_loss l1_loss smooth_l1_loss
        binary_cross_entropy binary_cross_entropy_with_logits nll_loss kl_div
        margin_ranking_loss cosine_similarity label_smooth unfold sigmoid_focal_loss
        square_error_cost log_loss hinge_embedding_loss cosine_embedding_loss
        triplet_margin_loss""",
    "paddle.nn.initializer": """
        Constant Normal TruncatedNormal Uniform XavierNormal XavierUniform KaimingNormal
        KaimingUniform Assign Orthogonal""",
    "paddle.optimizer": """
        Optimizer SGD Momentum Adam AdamW RMSProp Adagrad Adadelta Adamax Lamb lr""",
    "paddle.optimizer.lr": """
        LRScheduler StepDecay MultiStepDecay ExponentialDecay CosineAnnealingDecay LinearWarmup
        PiecewiseDecay PolynomialDecay NoamDecay LambdaDecay NaturalExpDecay InverseTimeDecay
        OneCycleLR CyclicLR ReduceOnPlateau MultiplicativeDecay""",
    "paddle.regularizer": "L1Decay L2Decay",
    "paddle.io": """
        Dataset IterableDataset TensorDataset DataLoader BatchSampler DistributedBatchSampler
        Sampler RandomSampler SequenceSampler WeightedRandomSampler Subset random_split
        ComposeDataset ChainDataset get_worker_info""",
    "paddle.metric": "Metric Accuracy Precision Recall Auc accuracy",
    "paddle.vision.models": """
        LeNet ResNet resnet18 resnet34 resnet50 resnet101 resnet152 wide_resnet50_2 VGG vgg11
        vgg13 vgg16 vgg19 MobileNetV1 MobileNetV2 mobilenet_v1 mobilenet_v2 AlexNet alexnet
        SqueezeNet squeezenet1_0 squeezenet1_1""",
    "paddle.vision.transforms": """
        Compose ToTensor Normalize Resize CenterCrop RandomCrop RandomResizedCrop
        RandomHorizontalFlip RandomVerticalFlip Pad ColorJitter Grayscale RandomRotation
        Transpose BrightnessTransform""",
    "paddle.vision.datasets": "MNIST FashionMNIST Cifar10 Cifar100 DatasetFolder ImageFolder",
    "paddle.distributed": """
        init_parallel_env get_rank get_world_size spawn launch ParallelEnv all_reduce
        all_gather all_gather_object broadcast reduce scatter barrier new_group send recv isend
        irecv ReduceOp alltoall wait is_initialized fleet""",
    "paddle.distributed.fleet": """
        init DistributedStrategy distributed_model distributed_optimizer worker_index worker_num
        barrier_worker is_first_worker""",
    "paddle.amp": "auto_cast GradScaler decorate",
    "paddle.callbacks": """
        Callback ProgBarLogger ModelCheckpoint EarlyStopping LRScheduler ReduceLROnPlateau""",
    "paddle.device": "set_device get_device is_compiled_with_cuda cuda",
}
NAMES = {ns: text.split() for ns, text in NAMES.items()}


def crew_module_name(namespace):
    """'paddle.nn.functional' -> 'crew.nn.functional'."""
    return "crew" + namespace[len("paddle"):]


def _target(namespace):
    """The crew object that should hold namespace's names, or None when it does not import."""
    if namespace == "paddle.Tensor":
        return sys.modules["crew"].Tensor
    try:
        return importlib.import_module(crew_module_name(namespace))
    except ImportError:
        return None


def _has(obj, name):
    if obj is None:
        return False
    try:
        if hasattr(obj, name):
            return True
    except Exception:  # a property that needs an instance is still a name crew has
        return True
    if not isinstance(obj, types.ModuleType):
        return False
    try:  # a submodule not imported yet (paddle.distributed.launch)
        importlib.import_module(f"{obj.__name__}.{name}")
        return True
    except ImportError:
        return False


def coverage():
    """{namespace: (supported names, missing names)}."""
    out = {}
    for ns, names in NAMES.items():
        obj = _target(ns)
        have = [n for n in names if _has(obj, n)]
        out[ns] = (have, [n for n in names if n not in have])
    return out


def _missing_attribute(module_name):
    namespace = "paddle" + module_name[len("crew"):]
    paddle_has = set(NAMES.get(namespace, ()))

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        if name in paddle_has:
            raise AttributeError(
                f"module '{module_name}' has no attribute '{name}': Paddle 2.4 has "
                f"{namespace}.{name}, crew does not provide it yet (docs/python.md lists "
                f"what crew covers)")
        raise AttributeError(
            f"module '{module_name}' has no attribute '{name}' (nor has Paddle 2.4's {namespace})")
    return __getattr__


def install():
    """Gives each of crew's Paddle namespaces that has no __getattr__ of its own the one above."""
    for ns in NAMES:
        if ns == "paddle.Tensor":
            continue
        module = sys.modules.get(crew_module_name(ns))
        if module is not None and "__getattr__" not in vars(module):
            module.__getattr__ = _missing_attribute(module.__name__)


def markdown():
    """The coverage table of docs/python.md."""
    rows = ["| namespace | crew has | of | missing |", "| --- | ---: | ---: | --- |"]
    total_have = total = 0
    for ns, (have, missing) in coverage().items():
        total_have += len(have)
        total += len(NAMES[ns])
        rows.append(f"| `{ns}` | {len(have)} | {len(NAMES[ns])} | {' '.join(missing) or '-'} |")
    rows.append(f"| **all** | **{total_have}** | **{total}** | {100.0 * total_have / total:.0f}% |")
    return "\n".join(rows)


if __name__ == "__main__":
    import crew  # noqa: F401 (the namespaces must be imported)
    print(markdown())
