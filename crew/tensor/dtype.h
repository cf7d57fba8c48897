#pragma once
// Element types of a Tensor.
//
// Two dispatchers, by what a kernel does with the elements:
//   dispatch_dtype("relu", x.dtype(), [&](auto tag) { using T = decltype(tag); ... });
//     arithmetic: the compute types only (float32, float64, int32, int64, uint8); bfloat16
//     and float16 throw DTypeError "relu: no bfloat16 kernel ..." unless the op has its own
//     low-precision path before the dispatch (crew::bfloat16 has no arithmetic, so an
//     instantiation on it would not compile anyway).
//   dispatch_storage_dtype(x.dtype(), [&](auto tag) { ... });
//     moving or converting elements (copy, cast, fill, gather): every dtype, the 16-bit ones
//     as crew::bfloat16 / crew::float16 (crew/tensor/half.h), converted with element_cast.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "crew/tensor/half.h"

namespace crew {

// BOOL: one byte holding 0 or 1 (Paddle's "bool"); comparisons and masks are BOOL.
enum class DType : uint8_t { FLOAT32, FLOAT64, INT32, INT64, UINT8, BFLOAT16, FLOAT16, BOOL };

// Bytes per element.
size_t dtype_size(DType dtype);
// "float32", "int64", "bfloat16", ... (Paddle's names).
const char* dtype_name(DType dtype);
// Parses a name from dtype_name(); throws ValueError otherwise.
DType parse_dtype(const std::string& name);
// float32, float64, bfloat16, float16.
bool is_floating(DType dtype);
// bfloat16 and float16: storage types whose kernels compute in float32.
constexpr bool is_low_precision(DType dtype) { return dtype == DType::BFLOAT16 || dtype == DType::FLOAT16; }
// Throws DTypeError "<op>: no <dtype> kernel (cast with astype('float32') ...)".
[[noreturn]] void throw_no_dtype_kernel(const char* op, DType dtype);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::FLOAT32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::FLOAT64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::INT32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::INT64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UINT8; };
template <> struct DTypeOf<bfloat16> { static constexpr DType value = DType::BFLOAT16; };
template <> struct DTypeOf<float16> { static constexpr DType value = DType::FLOAT16; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::BOOL; };
template <typename T> constexpr DType dtype_of = DTypeOf<T>::value;

// Calls fn(T{}) with T the C++ type of a compute dtype (bool for BOOL: arithmetic kernels
// refuse it first); `op` names the caller in the DTypeError a 16-bit dtype gets.
template <typename Fn>
decltype(auto) dispatch_dtype(const char* op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::FLOAT32: return fn(float{});
    case DType::FLOAT64: return fn(double{});
    case DType::INT32: return fn(int32_t{});
    case DType::INT64: return fn(int64_t{});
    case DType::UINT8: return fn(uint8_t{});
    case DType::BOOL: return fn(bool{});
    case DType::BFLOAT16:
    case DType::FLOAT16: break;
  }
  throw_no_dtype_kernel(op, dtype);
}

// dispatch_dtype for callers that do not name themselves (the error says "this op").
template <typename Fn>
decltype(auto) dispatch_dtype(DType dtype, Fn&& fn) {
  return dispatch_dtype("this op", dtype, std::forward<Fn>(fn));
}

// Calls fn(T{}) with T the C++ type of any dtype, crew::bfloat16 and crew::float16 included.
template <typename Fn>
decltype(auto) dispatch_storage_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::BFLOAT16: return fn(bfloat16{});
    case DType::FLOAT16: return fn(float16{});
    default: return dispatch_dtype(dtype, std::forward<Fn>(fn));
  }
}

}  // namespace crew
