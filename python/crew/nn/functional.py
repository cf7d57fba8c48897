"""crew.nn.functional: Paddle's paddle.nn.functional, in C++ (crew::nn::functional)."""
from .._C.nn.functional import (accuracy, cross_entropy, flatten, gelu, linear, log_softmax,  # noqa: F401
                                mse_loss, relu, sigmoid, softmax, tanh)
from .._C.nn.functional import (adaptive_avg_pool2d, embedding, layer_norm,  # noqa: F401
                                scaled_dot_product_attention)
from .loss_functional import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401,E402
                              kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .composed_functional import (adaptive_max_pool2d, avg_pool1d, dropout2d, group_norm,  # noqa: F401,E402
                                  hardswish, instance_norm, interpolate, leaky_relu, max_pool1d, pad,
                                  prelu, relu6, silu, softplus, swish, upsample)


_linear_with_bias = linear  # noqa: F405


def linear(x, weight, bias=None, name=None):  # noqa: F811
    """Paddle's F.linear: y = x W (+ b), W [in, out]; bias is optional."""
    if bias is None:
        from .. import _C
        return _C.matmul(x, weight)
    return _linear_with_bias(x, weight, bias)


from .functional_extra import (adaptive_avg_pool1d, alpha_dropout, avg_pool1d, avg_pool2d,  # noqa: F401,E402
                               batch_norm, conv1d, conv1d_transpose, conv2d, conv2d_transpose,
                               cosine_similarity, dropout, elu, hardsigmoid, hardtanh, label_smooth,
                               local_response_norm, log_loss, log_softmax, margin_ranking_loss, max_pool1d,
                               max_pool2d, mish, normalize, one_hot, pairwise_distance, pixel_shuffle, selu,
                               sigmoid_focal_loss, softmax_with_cross_entropy, softsign, square_error_cost,
                               swish, tanhshrink, unfold)
from .functional_extra import group_norm, instance_norm  # noqa: F401,E402,F811
from .functional_extra import interpolate, upsample  # noqa: F401,E402,F811
from .conv3d import conv3d  # noqa: F401,E402
from .loss_embedding import cosine_embedding_loss, hinge_embedding_loss, triplet_margin_loss  # noqa: F401,E402
