#pragma once
// Element types of a Tensor.
#include <cstddef>
#include <cstdint>
#include <string>

namespace crew {

// BOOL: one byte holding 0 or 1 (Paddle's "bool"); comparisons and masks are BOOL.
enum class DType : uint8_t { FLOAT32, FLOAT64, INT32, INT64, UINT8, BOOL };

// Bytes per element.
size_t dtype_size(DType dtype);
// "float32", "int64", ... (Paddle's names).
const char* dtype_name(DType dtype);
// Parses a name from dtype_name(); throws ValueError otherwise.
DType parse_dtype(const std::string& name);
bool is_floating(DType dtype);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::FLOAT32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::FLOAT64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::INT32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::INT64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UINT8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::BOOL; };
template <typename T> constexpr DType dtype_of = DTypeOf<T>::value;

// Calls fn(T{}) with T the C++ type of dtype (bool for BOOL: arithmetic kernels refuse it first): CREW_DISPATCH(dt, [&](auto tag){ using T = decltype(tag); ... }).
template <typename Fn>
decltype(auto) dispatch_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::FLOAT32: return fn(float{});
    case DType::FLOAT64: return fn(double{});
    case DType::INT32: return fn(int32_t{});
    case DType::INT64: return fn(int64_t{});
    case DType::UINT8: return fn(uint8_t{});
    case DType::BOOL: return fn(bool{});
  }
  return fn(float{});
}

}  // namespace crew
