#include "crew/tensor/kernels/fill_cast.h"

#include "crew/tensor/kernels/convert_half.h"

namespace crew::kernels {
namespace {

void fill_cpu(const Tensor& t, double value) {
  dispatch_storage_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.raw_data("fill_"));
    const T v = element_cast<T>(value);
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
}

// float32 <-> bfloat16/float16, the casts mixed precision makes every step; false otherwise.
bool cast_half_fast(const Tensor& src, const Tensor& dst, int64_t n) {
  const DType s = src.dtype(), d = dst.dtype();
  if (s == DType::FLOAT32 && d == DType::BFLOAT16) {
    float_to_bf16(src.data<float>(), dst.data<bfloat16>(), n);
  } else if (s == DType::BFLOAT16 && d == DType::FLOAT32) {
    bf16_to_float(src.data<bfloat16>(), dst.data<float>(), n);
  } else if (s == DType::FLOAT32 && d == DType::FLOAT16) {
    float_to_fp16(src.data<float>(), dst.data<float16>(), n);
  } else if (s == DType::FLOAT16 && d == DType::FLOAT32) {
    fp16_to_float(src.data<float16>(), dst.data<float>(), n);
  } else {
    return false;
  }
  return true;
}

void cast_cpu(const Tensor& src, const Tensor& dst) {
  const int64_t n = src.numel();
  if (cast_half_fast(src, dst, n)) return;
  dispatch_storage_dtype(dst.dtype(), [&](auto dst_tag) {
    using D = decltype(dst_tag);
    D* d = static_cast<D*>(dst.raw_data("cast"));
    dispatch_storage_dtype(src.dtype(), [&](auto src_tag) {
      using S = decltype(src_tag);
      const S* s = static_cast<const S*>(src.raw_data("cast"));
      for (int64_t i = 0; i < n; ++i) d[i] = element_cast<D>(s[i]);
    });
  });
}

}  // namespace

constinit KernelSlot<FillFn> fill_kernel("fill", &fill_cpu);
constinit KernelSlot<CastFn> cast_kernel("cast", &cast_cpu);

}  // namespace crew::kernels
