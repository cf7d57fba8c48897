// bfloat16 / float16 storage: the conversions against a float64 reference (round to nearest
// even, NaN, inf, subnormals), the bulk kernels, Tensor casts, printing, safetensors, and the
// dispatch rule (ops without a 16-bit kernel refuse with a DTypeError naming op and dtype).
#include "crew/tensor/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "crew/tensor/kernels/convert_half.h"
#include "crew/tensor/kernels/reduce.h"
#include "crew/tensor/safetensors.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

// float16 bits -> value, from the format's definition.
double fp16_reference_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return sign ? -v : v;
}

double bf16_reference_value(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 7) & 0xff, mant = h & 0x7f;
  double v;
  if (exp == 0xff) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -133);
  } else {
    v = std::ldexp(128 + mant, exp - 134);
  }
  return sign ? -v : v;
}

// Round-to-nearest-even of a finite x onto the positive finite codes [0, max_code] whose
// values `value(code)` grow with the code; beyond max value + half an ulp: inf_code.
template <typename ValueFn>
uint16_t reference_round(double x, uint16_t max_code, uint16_t inf_code, ValueFn value) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  const double top = value(max_code), ulp = top - value(max_code - 1);
  if (a >= top + ulp / 2) return sign | inf_code;  // a tie at the top rounds to the even inf
  uint16_t lo = 0, hi = max_code;                  // largest code with value <= a
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (value(mid) <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == max_code) return sign | lo;
  const double below = a - value(lo), above = value(lo + 1) - a;
  if (below < above) return sign | lo;
  if (above < below) return sign | (lo + 1);
  return sign | ((lo & 1) ? lo + 1 : lo);
}

uint16_t fp16_reference(double x) { return reference_round(x, 0x7bff, 0x7c00, fp16_reference_value); }
uint16_t bf16_reference(double x) { return reference_round(x, 0x7f7f, 0x7f80, bf16_reference_value); }

// Random floats over all exponents (subnormals, huge, ties made by zeroing low bits).
std::vector<float> test_floats(size_t n) {
  std::mt19937 gen(7);
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = gen();
    if (i % 4 == 1) u &= 0xffff8000u;  // a bfloat16 tie or exact
    if (i % 4 == 2) u &= 0xffffe000u;  // a float16 tie or exact (in its normal range)
    float f = std::bit_cast<float>(u);
    if (std::isnan(f)) f = 1.0f;
    if (i % 3 == 0) f = std::ldexp(f - std::trunc(f) + 1.0f, static_cast<int>(gen() % 50) - 30);
    v.push_back(f);
  }
  return v;
}

TEST(HalfTest, Bfloat16RoundsToNearestEvenAgainstFloat64Reference) {
  for (float f : test_floats(200000)) {
    ASSERT_EQ(bfloat16(f).bits, bf16_reference(f)) << f;
    ASSERT_EQ(static_cast<double>(static_cast<float>(bfloat16(f))), bf16_reference_value(bf16_reference(f)));
  }
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie, even below
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie, even above
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808001u)).bits, 0x3f81);  // past the tie
}

TEST(HalfTest, Float16RoundsToNearestEvenAgainstFloat64Reference) {
  for (float f : test_floats(200000)) {
    ASSERT_EQ(float16(f).bits, fp16_reference(f)) << f;
  }
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float16(65519.0f).bits, 0x7bff);            // below the midpoint to 65536
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);            // the midpoint: rounds to even (inf)
  EXPECT_EQ(float16(1.0f + 1.0f / 2048).bits, 0x3c00);  // tie down to even
  EXPECT_EQ(float16(1.0f + 3.0f / 2048).bits, 0x3c02);  // tie up to even
}

TEST(HalfTest, EveryFloat16AndBfloat16ValueConvertsExactlyToFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const double f16 = fp16_reference_value(b), bf = bf16_reference_value(b);
    if (std::isnan(f16)) {
      ASSERT_TRUE(std::isnan(static_cast<float>(float16::from_bits(b))));
    } else {
      ASSERT_EQ(static_cast<float>(float16::from_bits(b)), f16) << h;
      ASSERT_EQ(float16(static_cast<float>(f16)).bits, b) << h;  // round trip
    }
    if (std::isnan(bf)) {
      ASSERT_TRUE(std::isnan(static_cast<float>(bfloat16::from_bits(b))));
    } else {
      ASSERT_EQ(static_cast<float>(bfloat16::from_bits(b)), bf) << h;
      ASSERT_EQ(bfloat16(static_cast<float>(bf)).bits, b) << h;
    }
  }
}

TEST(HalfTest, NanInfZeroAndSubnormalsAreKept) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float snan = std::numeric_limits<float>::signaling_NaN();
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(nan))));
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(snan))));
  EXPECT_TRUE(
      std::isnan(static_cast<float>(bfloat16(std::bit_cast<float>(0x7f800001u)))));  // would round to inf
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(nan))));
  EXPECT_EQ(bfloat16(inf).bits, 0x7f80);
  EXPECT_EQ(bfloat16(-inf).bits, 0xff80);
  EXPECT_EQ(float16(inf).bits, 0x7c00);
  EXPECT_EQ(float16(-inf).bits, 0xfc00);
  EXPECT_EQ(float16(1e6f).bits, 0x7c00);  // overflow
  EXPECT_EQ(bfloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(float16(-0.0f).bits, 0x8000);
  // Subnormals: bfloat16 keeps float's (VCVTNEPS2BF16 would flush them), float16 has its own.
  EXPECT_EQ(bfloat16(std::ldexp(1.0f, -130)).bits, 0x0008);
  EXPECT_EQ(float16(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(float16(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie to even (zero)
  EXPECT_EQ(float16(std::ldexp(3.0f, -26)).bits, 0x0001);  // above the tie
  EXPECT_EQ(float16(std::ldexp(3.0f, -25)).bits, 0x0002);  // tie 1.5 ulp -> 2
}

TEST(HalfTest, DoubleRoundsOnceNotTwice) {
  // 1 + 2^-8 + 2^-30: as float it is the bfloat16 tie 1 + 2^-8, which would round down; the
  // double is above the tie and must round up.
  const double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(bfloat16(d).bits, bf16_reference(d));
  EXPECT_EQ(bfloat16(d).bits, 0x3f81);
  const double h = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(float16(h).bits, fp16_reference(h));
  EXPECT_EQ(float16(h).bits, 0x3c01);
  std::mt19937_64 gen(3);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(std::bit_cast<double>((gen() >> 12) | 0x3ff0000000000000ull),
                                static_cast<int>(gen() % 40) - 20);
    ASSERT_EQ(bfloat16(x).bits, bf16_reference(x)) << x;
    ASSERT_EQ(float16(x).bits, fp16_reference(x)) << x;
  }
}

TEST(HalfTest, BulkConversionsMatchTheScalarOnes) {
  for (size_t n : {size_t{0}, size_t{7}, size_t{8}, size_t{1003}, size_t{200001}}) {
    std::vector<float> src = test_floats(n);
    if (n > 3) src[1] = std::numeric_limits<float>::infinity(), src[2] = -0.0f;
    std::vector<bfloat16> b(n);
    std::vector<float16> h(n);
    std::vector<float> back(n);
    kernels::float_to_bf16(src.data(), b.data(), static_cast<int64_t>(n));
    kernels::float_to_fp16(src.data(), h.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(b[i].bits, bfloat16(src[i]).bits) << i;
      ASSERT_EQ(h[i].bits, float16(src[i]).bits) << i;
    }
    kernels::bf16_to_float(b.data(), back.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<float>(b[i]));
    kernels::fp16_to_float(h.data(), back.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<float>(h[i]));
  }
}

TEST(HalfTest, TensorCastsBetweenAllFloatTypes) {
  const std::vector<double> values{1.0, -2.5, 3.14159265358979, 1e-6, 65504.0, 1e5, 0.0};
  const Tensor f64 = Tensor::from_vector<double>(values, {7});
  for (DType low : {DType::BFLOAT16, DType::FLOAT16}) {
    const Tensor t = f64.to(low);
    EXPECT_EQ(t.dtype(), low);
    EXPECT_EQ(t.nbytes(), 14u);
    const std::vector<double> via64 = t.to_vector<double>();
    const std::vector<double> via32 = f64.to(DType::FLOAT32).to(low).to(DType::FLOAT64).to_vector<double>();
    for (size_t i = 0; i < values.size(); ++i) {
      const double want = low == DType::BFLOAT16 ? bf16_reference_value(bf16_reference(values[i]))
                                                 : fp16_reference_value(fp16_reference(values[i]));
      EXPECT_EQ(via64[i], want) << dtype_name(low) << " " << values[i];
      EXPECT_EQ(via32[i], want) << dtype_name(low) << " " << values[i];
    }
  }
  // 16-bit -> 16-bit and -> integers go through float.
  const Tensor b = f64.to(DType::BFLOAT16);
  EXPECT_EQ(b.to(DType::FLOAT16).to_vector<double>()[2], 3.140625);
  EXPECT_EQ(b.to(DType::INT64).to_vector<int64_t>()[1], -2);
  EXPECT_EQ(Tensor::full({3}, 0.1, DType::BFLOAT16).to_vector<float>()[0], static_cast<float>(bfloat16(0.1)));
  EXPECT_EQ(Tensor::arange(4, DType::FLOAT16).to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
}

TEST(HalfTest, PrintsWithTheDtypeName) {
  const Tensor t = Tensor::from_vector<double>({1.0, 0.1}, {2}).to(DType::BFLOAT16);
  EXPECT_EQ(t.to_string(), "Tensor(shape=[2], dtype=bfloat16, [1, 0.100098])");
  EXPECT_EQ(parse_dtype("float16"), DType::FLOAT16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BFLOAT16);
  EXPECT_TRUE(is_floating(DType::BFLOAT16));
}

TEST(HalfTest, SafetensorsRoundTripsBf16AndF16) {
  testing::TempDir dir;
  StateDict sd;
  const Tensor f = Tensor::from_vector<float>({1.5f, -0.1f, 1e-3f, 3e4f}, {2, 2});
  sd.insert("b", f.to(DType::BFLOAT16));
  sd.insert("h", f.to(DType::FLOAT16));
  save(sd, dir.file("m.safetensors"));
  const StateDict back = load(dir.file("m.safetensors"));
  for (const char* key : {"b", "h"}) {
    const Tensor& t = back.at(key);
    EXPECT_EQ(t.dtype(), sd.at(key).dtype());
    EXPECT_EQ(t.shape(), (Shape{2, 2}));
    EXPECT_EQ(t.to_vector<float>(), sd.at(key).to_vector<float>()) << key;
  }
  EXPECT_STREQ(safetensors_dtype(DType::BFLOAT16), "BF16");
  EXPECT_STREQ(safetensors_dtype(DType::FLOAT16), "F16");
}

TEST(HalfTest, OpsWithoutA16BitKernelRefuseWithTheOpAndDtype) {
  const Tensor x = Tensor::ones({2, 4}, DType::BFLOAT16);
  try {
    kernels::sum_axis(x, 1, false, 1.0);
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("sum_axis"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dispatch_dtype("sum", DType::FLOAT16, [](auto) {}), DTypeError);
}

}  // namespace
}  // namespace crew
