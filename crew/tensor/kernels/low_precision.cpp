#include "crew/tensor/kernels/low_precision.h"

#include <dnnl.hpp>
#include <mutex>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/tensor/kernels/dnnl_context.h"

namespace crew::kernels {
namespace {

bool probe(dnnl::memory::data_type dt) {
  try {
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc md({16, 16}, dt, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), detail::cpu_engine());
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

void warn_fallback(DType dtype, const char* op) {
  const bool bf16 = dtype == DType::BFLOAT16;
  CREW_LOG(WARNING)
      << op << " on " << dtype_name(dtype) << " is slow: "
      << (bf16 ? "this CPU (or ONEDNN_MAX_CPU_ISA) has no AVX-512, so oneDNN has no bfloat16 kernels"
               : "oneDNN has no float16 kernels for CPUs")
      << "; " << dtype_name(dtype)
      << " ops convert their operands to float32, compute in float32 and round the result, "
         "which is slower than float32 alone (this warning is shown once)";
}

}  // namespace

bool dnnl_supports(DType dtype, const char* op) {
  static const bool bf16 = probe(dnnl::memory::data_type::bf16);
  static const bool f16 = probe(dnnl::memory::data_type::f16);
  const bool ok = dtype == DType::BFLOAT16 ? bf16 : dtype == DType::FLOAT16 ? f16 : true;
  if (!ok) {
    static std::once_flag warned;
    std::call_once(warned, [&] { warn_fallback(dtype, op); });
  }
  return ok;
}

Tensor to_float32(const Tensor& x) { return x.dtype() == DType::FLOAT32 ? x : x.to(DType::FLOAT32); }

void check_same_dtype(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                      const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dtype() == b.dtype()) return;
  CREW_THROW(DTypeError, op, ": dtypes differ (", a_name, " ", dtype_name(a.dtype()), ", ", b_name, " ",
             dtype_name(b.dtype()), "); cast one with astype() first");
}

void check_floating_or_half(const Tensor& t, const char* op) {
  CREW_CHECK(t.defined(), op, ": tensor is undefined");
  CREW_CHECK_T(DTypeError, is_floating(t.dtype()), op, ": expected a floating-point tensor, got ",
               dtype_name(t.dtype()));
}

}  // namespace crew::kernels
