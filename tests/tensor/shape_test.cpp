#include <gtest/gtest.h>

#include "crew/tensor/shape.h"
#include "crew/tensor/tensor.h"

namespace crew {
namespace {

constexpr int64_t k2to32 = int64_t{1} << 32;

TEST(Shape, NumelRefusesProductsThatOverflow) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({0, 7}), 0);
  EXPECT_EQ(shape_numel({kMaxNumel}), kMaxNumel);
  EXPECT_THROW(shape_numel({k2to32, k2to32}), ValueError);        // 2^64 wraps to 0
  EXPECT_THROW(shape_numel({0, k2to32, k2to32}), ValueError);     // empty, but strides overflow
  EXPECT_THROW(shape_numel({3, int64_t{1} << 62}), ValueError);   // wraps to a small positive
  EXPECT_THROW(shape_numel({kMaxNumel, 2}), ValueError);
  EXPECT_THROW(shape_numel({2, -1}), ValueError);
}

// The attack of issue 29 (crew.reshape goes through the same infer_shape): an empty tensor reshaped to [2^32, 2^32] was accepted (2^64 wrapped
// to 0 elements), and reading it read other memory.
TEST(Shape, ReshapeOfAnEmptyTensorToAnOverflowingShapeIsAValueError) {
  Tensor empty = Tensor::zeros({0});
  EXPECT_THROW(empty.view({k2to32, k2to32}), ValueError);
  EXPECT_THROW(empty.view({k2to32, k2to32, -1}), ValueError);
  EXPECT_THROW(Tensor::zeros({k2to32, k2to32}), ValueError);
  EXPECT_THROW(Tensor::uninitialized({int64_t{1} << 31, int64_t{1} << 31, 4}), ValueError);
  try {
    empty.view({k2to32, k2to32});
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[4294967296, 4294967296]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Tensor::zeros({6}).view({2, -1}).shape(), (Shape{2, 3}));
}

}  // namespace
}  // namespace crew
