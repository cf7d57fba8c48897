#pragma once
// The 16-bit floating-point storage types: bfloat16 (8-bit exponent, 8-bit significand) and
// IEEE float16 (5-bit exponent, 11-bit significand). They hold bits and convert to and from
// float; they have no arithmetic on purpose, so a kernel template instantiated on them by
// mistake does not compile. Kernels compute in float32 and round once when they store.
//
//   crew::bfloat16 b(3.14159f);        // rounds to nearest even: 3.140625
//   float f = static_cast<float>(b);   // exact
//   uint16_t bits = b.bits;            // 0x4049
#include <bit>
#include <cstdint>
#include <type_traits>

namespace crew {

// float -> bfloat16 bits, rounding to nearest even; NaN stays a (quiet) NaN, inf stays inf,
// subnormals are kept (unlike VCVTNEPS2BF16, which flushes them).
constexpr uint16_t float_to_bf16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
// bfloat16 bits -> float (exact).
constexpr float bf16_bits_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

// float -> IEEE half bits, rounding to nearest even (F. Giesen's float_to_half_fast3_rtne):
// overflow gives inf, NaN a quiet NaN, tiny values float16 subnormals.
inline uint16_t float_to_fp16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= (127u + 16u) << 23) {
    o = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < 113u << 23) {
    // Adding 0.5f lines the float16 subnormal ulp (2^-24) up with float's ulp at 0.5, so the
    // FPU's own round-to-nearest-even does the rounding.
    const float magic = 0.5f;
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(u) + magic) - std::bit_cast<uint32_t>(magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mant_odd;
    o = u >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}
// IEEE half bits -> float (exact).
inline float fp16_bits_to_float(uint16_t h) {
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = shifted_exp & o;
  o += static_cast<uint32_t>(127 - 15) << 23;
  float f;
  if (exp == shifted_exp) {
    o += static_cast<uint32_t>(128 - 16) << 23;
    f = std::bit_cast<float>(o);
  } else if (exp == 0) {
    o += 1u << 23;
    f = std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23);
  } else {
    f = std::bit_cast<float>(o);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | ((static_cast<uint32_t>(h) & 0x8000u) << 16));
}

// double -> float rounded to odd: with at least two spare bits below the 16-bit format's
// significand, a following round-to-nearest-even then rounds the double correctly (no double
// rounding from double -> float -> half).
inline float double_to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || f != f || f - f != 0.0f) return f;
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((f < 0 ? -static_cast<double>(f) : static_cast<double>(f)) > (d < 0 ? -d : d)) --u;
  return std::bit_cast<float>(u | 1u);
}

// bfloat16 storage: 16 bits, converting explicitly to and from float.
struct bfloat16 {
  uint16_t bits = 0;
  constexpr bfloat16() = default;
  explicit bfloat16(float f) : bits(float_to_bf16_bits(f)) {}
  explicit bfloat16(double d) : bits(float_to_bf16_bits(double_to_float_round_odd(d))) {}
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  explicit constexpr operator float() const { return bf16_bits_to_float(bits); }
};

// IEEE float16 storage: 16 bits, converting explicitly to and from float.
struct float16 {
  uint16_t bits = 0;
  constexpr float16() = default;
  explicit float16(float f) : bits(float_to_fp16_bits(f)) {}
  explicit float16(double d) : bits(float_to_fp16_bits(double_to_float_round_odd(d))) {}
  static constexpr float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return fp16_bits_to_float(bits); }
};

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

// static_cast<D>(s) for any two element types, the 16-bit ones included: through float for a
// 16-bit source, through double (rounded once) into a 16-bit destination.
template <typename D, typename S>
D element_cast(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (is_half_v<S>) {
    return element_cast<D>(static_cast<float>(s));
  } else if constexpr (is_half_v<D>) {
    if constexpr (std::is_same_v<S, float>) {
      return D(s);
    } else {
      return D(static_cast<double>(s));
    }
  } else {
    return static_cast<D>(s);
  }
}

}  // namespace crew
