#include "crew/tensor/dtype.h"

#include "crew/core/check.h"

namespace crew {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::FLOAT32: return 4;
    case DType::FLOAT64: return 8;
    case DType::INT32: return 4;
    case DType::INT64: return 8;
    case DType::UINT8: return 1;
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
    case DType::BOOL: return "bool";
  }
  return "unknown";
}

DType parse_dtype(const std::string& name) {
  for (DType d : {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8, DType::BOOL}) {
    if (name == dtype_name(d)) return d;
  }
  CREW_THROW(ValueError, "unknown dtype '", name, "' (expected float32, float64, int32, int64, uint8 or bool)");
}

bool is_floating(DType dtype) { return dtype == DType::FLOAT32 || dtype == DType::FLOAT64; }

}  // namespace crew
