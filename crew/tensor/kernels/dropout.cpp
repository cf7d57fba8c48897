#include "crew/tensor/kernels/dropout.h"

#include <type_traits>

#include "crew/tensor/kernels/math/dropout_stream.h"

namespace crew::kernels {
namespace {

Tensor dropout_mask_cpu(const Tensor& x, double p, uint64_t seed) {
  Tensor mask = Tensor::empty(x.shape(), x.dtype());
  const double keep_scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  const math::DropoutStream stream{seed};
  const uint64_t threshold = math::DropoutStream::threshold(p);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      T* m = mask.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        m[i] = stream.keep(static_cast<uint64_t>(i), p, threshold) ? static_cast<T>(keep_scale) : T(0);
      }
    }
  });
  return mask;
}

}  // namespace

constinit KernelSlot<DropoutMaskFn> dropout_mask_kernel("dropout_mask", &dropout_mask_cpu);

Tensor dropout_mask(const Tensor& x, double p, uint64_t seed) {
  return dropout_mask_kernel.get(x.place().type)(x, p, seed);
}

}  // namespace crew::kernels
