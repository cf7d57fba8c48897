#pragma once
// dropout's mask ("upscale_in_train", Paddle's default mode): each element kept with
// probability 1 - p and then worth 1 / (1 - p), else 0; the draws are those of
// crew/tensor/kernels/math/dropout_stream.h for one seed.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// A mask of x's shape, dtype (floating) and place for drop probability p in (0, 1].
Tensor dropout_mask(const Tensor& x, double p, uint64_t seed);

using DropoutMaskFn = Tensor(const Tensor& x, double p, uint64_t seed);
extern KernelSlot<DropoutMaskFn> dropout_mask_kernel;

}  // namespace crew::kernels
