// DType::BOOL: Paddle's bool, one byte holding 0 or 1; conversions read nonzero as true.
#include <gtest/gtest.h>

#include "crew/tensor/safetensors.h"
#include "crew/tensor/tensor.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

TEST(BoolDType, NameSizeAndParse) {
  EXPECT_STREQ(dtype_name(DType::BOOL), "bool");
  EXPECT_EQ(dtype_size(DType::BOOL), 1u);
  EXPECT_EQ(parse_dtype("bool"), DType::BOOL);
  EXPECT_FALSE(is_floating(DType::BOOL));
  EXPECT_EQ(dtype_of<bool>, DType::BOOL);
  // The codes of the older dtypes keep their values (wire formats, op records).
  EXPECT_EQ(static_cast<int>(DType::UINT8), 4);
  EXPECT_EQ(static_cast<int>(DType::BOOL), 7);  // after BFLOAT16 (5) and FLOAT16 (6)
}

TEST(BoolDType, ConversionsReadNonzeroAsTrue) {
  Tensor f = Tensor::from_vector<float>({0.0f, 2.5f, -1.0f, 0.0f});
  Tensor b = f.to(DType::BOOL);
  EXPECT_EQ(b.dtype(), DType::BOOL);
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(b.to(DType::INT64).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  Tensor full = Tensor::full({3}, 7.0, DType::BOOL);
  EXPECT_EQ(full.to_vector<double>(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(Tensor::zeros({2}, DType::BOOL).to_vector<double>(), (std::vector<double>{0, 0}));
  Tensor v = Tensor::from_vector<bool>({true, false, true});
  EXPECT_EQ(v.dtype(), DType::BOOL);
  EXPECT_EQ(v.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(f.to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
}

TEST(BoolDType, SafetensorsRoundTrip) {
  testing::TempDir dir;
  StateDict sd;
  sd.insert("mask", Tensor::from_vector<float>({1, 0, 3}).to(DType::BOOL));
  save(sd, dir.file("m.safetensors"));
  StateDict back = load(dir.file("m.safetensors"));
  EXPECT_EQ(back.at("mask").dtype(), DType::BOOL);
  EXPECT_EQ(back.at("mask").to_vector<double>(), (std::vector<double>{1, 0, 1}));
}

}  // namespace
}  // namespace crew
