#include "crew/distributed/backends/half_reduce.h"

#include <algorithm>

#include "crew/core/check.h"
#include "crew/tensor/kernels/convert_half.h"

namespace crew::dist::detail {
namespace {

// Elements widened per block: three float32 blocks of 4 KiB stay in L1.
constexpr int64_t kBlock = 1024;

void widen(const void* src, float* dst, int64_t n, DType dtype) {
  if (dtype == DType::BFLOAT16) {
    kernels::bf16_to_float(static_cast<const bfloat16*>(src), dst, n);
  } else {
    kernels::fp16_to_float(static_cast<const float16*>(src), dst, n);
  }
}

void narrow(const float* src, void* dst, int64_t n, DType dtype) {
  if (dtype == DType::BFLOAT16) {
    kernels::float_to_bf16(src, static_cast<bfloat16*>(dst), n);
  } else {
    kernels::float_to_fp16(src, static_cast<float16*>(dst), n);
  }
}

template <typename Op>
void combine(float* x, const float* y, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) x[i] = op(x[i], y[i]);
}

void combine_op(float* x, const float* y, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return combine(x, y, n, [](float p, float q) { return p + q; });
    case ReduceOp::PROD:
      return combine(x, y, n, [](float p, float q) { return p * q; });
    case ReduceOp::MAX:
      return combine(x, y, n, [](float p, float q) { return p > q ? p : q; });
    case ReduceOp::MIN:
      return combine(x, y, n, [](float p, float q) { return p < q ? p : q; });
  }
}

void check_half(DType dtype) {
  CREW_INTERNAL_ASSERT(is_low_precision(dtype), "half reduction of ", dtype_name(dtype));
}

}  // namespace

void half_reduce_pair(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op) {
  check_half(dtype);
  float x[kBlock], y[kBlock];
  const size_t esize = dtype_size(dtype);
  for (int64_t off = 0; off < n; off += kBlock) {
    const int64_t m = std::min(kBlock, n - off);
    widen(static_cast<const char*>(a) + off * esize, x, m, dtype);
    widen(static_cast<const char*>(b) + off * esize, y, m, dtype);
    combine_op(x, y, m, op);
    narrow(x, static_cast<char*>(dst) + off * esize, m, dtype);
  }
}

void half_divide(void* dst, int64_t n, DType dtype, int divisor) {
  check_half(dtype);
  float x[kBlock];
  const size_t esize = dtype_size(dtype);
  const float d = static_cast<float>(divisor);
  for (int64_t off = 0; off < n; off += kBlock) {
    const int64_t m = std::min(kBlock, n - off);
    char* p = static_cast<char*>(dst) + off * esize;
    widen(p, x, m, dtype);
    for (int64_t i = 0; i < m; ++i) x[i] /= d;
    narrow(x, p, m, dtype);
  }
}

}  // namespace crew::dist::detail
