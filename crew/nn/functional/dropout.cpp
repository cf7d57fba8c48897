// Inverted dropout ("upscale_in_train", Paddle's default mode).
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

// SplitMix64: a fast per-element stream seeded from one draw of the caller's Generator,
// so results are reproducible under crew::seed without locking per element.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  kernels::check_floating(x, "dropout");
  CREW_CHECK(p >= 0.0 && p <= 1.0, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  Generator& g = gen ? *gen : default_generator();
  uint64_t state = g.next_u64();
  Tensor mask = Tensor::empty(x.shape(), x.dtype());
  const double keep_scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  // Keep an element when its uniform draw in [0, 1) is >= p.
  const auto threshold = static_cast<uint64_t>(p * 18446744073709551616.0);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      T* m = mask.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) {
        const bool keep = p < 1.0 && splitmix64(state) >= threshold;
        m[i] = keep ? static_cast<T>(keep_scale) : T(0);
      }
    }
  });
  Tensor y = kernels::binary(kernels::BinaryOp::MUL, x, mask, "dropout");
  if (autograd::should_record({&x})) {
    autograd::record(y, "dropout", {x}, [mask](const Tensor& grad, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::binary(kernels::BinaryOp::MUL, grad, mask, "dropout backward")};
    });
  }
  return y;
}

}  // namespace crew::nn::functional
