#include "crew/tensor/kernels/amp.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/half.h"

namespace crew::kernels {
namespace {

// Compute type C (float or double), storage type S. The finiteness test is folded into the
// loop as x - x, which is NaN exactly for inf and NaN inputs, so the loop vectorises.
template <typename S, typename C>
bool unscale_typed(S* p, int64_t n, C inv_scale) {
  C bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C x = static_cast<C>(p[i]);
    bad += x - x;
    p[i] = static_cast<S>(x * inv_scale);
  }
  return std::isnan(bad);
}

bool unscale_cpu(const Tensor& g, double inv_scale) {
  const int64_t n = g.numel();
  const auto f = static_cast<float>(inv_scale);
  switch (g.dtype()) {
    case DType::FLOAT32:
      return unscale_typed(g.data<float>(), n, f);
    case DType::FLOAT64:
      return unscale_typed(g.data<double>(), n, inv_scale);
    case DType::BFLOAT16:
      return unscale_typed(g.data<bfloat16>(), n, f);
    case DType::FLOAT16:
      return unscale_typed(g.data<float16>(), n, f);
    default:
      throw_no_dtype_kernel("unscale_and_check_finite_", g.dtype());
  }
}

}  // namespace

constinit KernelSlot<UnscaleCheckFn> unscale_and_check_finite_kernel("unscale_and_check_finite_",
                                                                     &unscale_cpu);

bool unscale_and_check_finite_(const Tensor& g, double inv_scale) {
  CREW_CHECK(g.defined(), "unscale_and_check_finite_: gradient is undefined");
  CREW_CHECK(is_floating(g.dtype()), "unscale_and_check_finite_: gradient dtype ", dtype_name(g.dtype()),
             " is not floating");
  const bool bad = unscale_and_check_finite_kernel.get(g.place().type)(g, inv_scale);
  g.bump_version();
  return bad;
}

}  // namespace crew::kernels
