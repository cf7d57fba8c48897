#include "crew/tensor/kernels/fill_cast.h"

namespace crew::kernels {
namespace {

void fill_cpu(const Tensor& t, double value) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.raw_data("fill_"));
    const T v = static_cast<T>(value);
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
}

void cast_cpu(const Tensor& src, const Tensor& dst) {
  const int64_t n = src.numel();
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using D = decltype(dst_tag);
    D* d = static_cast<D*>(dst.raw_data("cast"));
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using S = decltype(src_tag);
      const S* s = static_cast<const S*>(src.raw_data("cast"));
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
    });
  });
}

}  // namespace

constinit KernelSlot<FillFn> fill_kernel("fill", &fill_cpu);
constinit KernelSlot<CastFn> cast_kernel("cast", &cast_cpu);

}  // namespace crew::kernels
