#include "crew/tensor/dtype.h"

#include "crew/core/check.h"

namespace crew {
namespace {
constexpr DType kAllDTypes[] = {DType::FLOAT32, DType::FLOAT64, DType::INT32,   DType::INT64,
                                DType::UINT8,   DType::BFLOAT16, DType::FLOAT16, DType::BOOL};
}  // namespace

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32: return 4;
    case DType::FLOAT64: return 8;
    case DType::INT32: return 4;
    case DType::INT64: return 8;
    case DType::UINT8: return 1;
    case DType::BFLOAT16: return 2;
    case DType::FLOAT16: return 2;
    case DType::BOOL: return 1;
  }
  CREW_INTERNAL_ASSERT(false, "unknown dtype");
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32: return "float32";
    case DType::FLOAT64: return "float64";
    case DType::INT32: return "int32";
    case DType::INT64: return "int64";
    case DType::UINT8: return "uint8";
    case DType::BFLOAT16: return "bfloat16";
    case DType::FLOAT16: return "float16";
    case DType::BOOL: return "bool";
  }
  return "unknown";
}

DType parse_dtype(const std::string& name) {
  for (DType d : kAllDTypes) {
    if (name == dtype_name(d)) return d;
  }
  CREW_THROW(ValueError, "unknown dtype '", name,
             "' (expected float32, float64, int32, int64, uint8, bfloat16, float16 or bool)");
}

bool is_floating(DType dtype) {
  return dtype == DType::FLOAT32 || dtype == DType::FLOAT64 || is_low_precision(dtype);
}

void throw_no_dtype_kernel(const char* op, DType dtype) {
  CREW_THROW(DTypeError, op, ": no ", dtype_name(dtype), " kernel (", dtype_name(dtype),
             " has kernels for matmul, linear, conv2d, batch_norm, layer_norm, relu, gelu and softmax; cast the input with "
             "astype('float32') for the others)");
}

}  // namespace crew
