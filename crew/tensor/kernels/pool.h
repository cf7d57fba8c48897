#pragma once
// 2-d max / average pooling kernels on oneDNN (float32, NCHW), cached per configuration.
// Average pooling excludes padding from the divisor (Paddle's exclusive=True default).
#include <array>
#include <cstdint>
#include <memory>
#include <tuple>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class PoolKind { MAX, AVG };

struct Pool2dParams {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> padding{0, 0};
};

// Validates x [N, C, H, W]; returns [N, C, (H + 2p - k) / s + 1, ...].
Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p);

// DIRECT: crew's own NCHW loops (pool_direct.h); ONEDNN: oneDNN's jit pooling behind
// nChw8c reorders. Both are tested against the reference; DIRECT is the default for
// row-major input because it is faster (docs/kernels.md has the figures);
// CREW_POOL_IMPL=onednn selects oneDNN. Input in a blocked layout (a conv's output, see
// crew/tensor/kernels/dnnl_layout.h) always goes to oneDNN, as it is, and so does the output.
enum class PoolImpl { DIRECT, ONEDNN };
PoolImpl default_pool_impl();

struct PoolForwardResult {
  Tensor y;
  // Max pooling: what backward needs (int32 argmax for DIRECT, opaque uint8 for ONEDNN).
  Tensor workspace;
  // The blocked layout x was in (oneDNN pooled it as it is, y is blocked too): backward
  // needs it. Null for a row-major x.
  std::shared_ptr<const OpaqueLayout> x_layout;
};

// with_workspace: keep what backward needs (training).
PoolForwardResult pool2d_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, bool with_workspace,
                                 PoolImpl impl = default_pool_impl());
// d loss / d x; `workspace` from the forward call (max pooling only; it also selects the
// implementation that produced it), and its x_layout.
Tensor pool2d_backward(PoolKind kind, const Tensor& grad_y, const Shape& x_shape, const Tensor& workspace,
                       const Pool2dParams& p, PoolImpl impl = default_pool_impl(),
                       const std::shared_ptr<const OpaqueLayout>& x_layout = nullptr);

// The slots the two run, on the operands' place; the forward's result as (y, workspace, x_layout).
using Pool2dForwardFn = std::tuple<Tensor, Tensor, std::shared_ptr<const OpaqueLayout>>(
    PoolKind kind, const Tensor& x, const Pool2dParams& p, bool with_workspace, PoolImpl impl);
using Pool2dBackwardFn = Tensor(PoolKind kind, const Tensor& grad_y, const Shape& x_shape,
                                const Tensor& workspace, const Pool2dParams& p, PoolImpl impl,
                                const std::shared_ptr<const OpaqueLayout>& x_layout);
extern KernelSlot<Pool2dForwardFn> pool2d_forward_kernel;
extern KernelSlot<Pool2dBackwardFn> pool2d_backward_kernel;

}  // namespace crew::kernels
