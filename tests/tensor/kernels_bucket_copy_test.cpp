// pack_flat / unpack_flat (crew/tensor/kernels/bucket_copy.h): the copies behind
// DataParallel's gradient buckets and its coalesced broadcast.
#include <gtest/gtest.h>

#include "crew/tensor/kernels/bucket_copy.h"
#include "crew/tensor/tensor.h"
#include "tests/testing/fake_device.h"

namespace crew {
namespace {

TEST(BucketCopy, PacksBackToBackFromAnOffsetAndUnpacksAgain) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<float>({5});
  Tensor flat = Tensor::full({7}, -1.0);
  kernels::pack_flat({a, b}, flat, 1);
  EXPECT_EQ(flat.to_vector<float>(), (std::vector<float>{-1, 1, 2, 3, 4, 5, -1}));
  Tensor a2 = Tensor::zeros({2, 2});
  Tensor b2 = Tensor::zeros({1});
  kernels::unpack_flat(flat, 1, {a2, b2});
  EXPECT_EQ(a2.to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(b2.to_vector<float>(), b.to_vector<float>());
  // A part that is a view (a slice with an element offset) is read from its own offset.
  Tensor rows = Tensor::from_vector<int64_t>({10, 11, 12, 13}, {4});
  Tensor packed = Tensor::zeros({2}, DType::INT64);
  kernels::pack_flat({rows.slice(2, 4)}, packed, 0);
  EXPECT_EQ(packed.to_vector<int64_t>(), (std::vector<int64_t>{12, 13}));
}

TEST(BucketCopy, RefusesWhatDoesNotFitNamingTheOp) {
  Tensor flat = Tensor::zeros({4});
  try {
    kernels::pack_flat({Tensor::zeros({3})}, flat, 2);
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "pack_flat: 3 elements from offset 2 do not fit a flat buffer of 4");
  }
  EXPECT_THROW(kernels::unpack_flat(flat, 0, {Tensor::zeros({2}, DType::FLOAT64)}), ValueError);
}

TEST(BucketCopy, DispatchesOnTheFlatBuffersPlace) {
  testing::FakeDevice fake;
  Tensor flat = Tensor::zeros({2}, DType::FLOAT32, fake.place());
  try {
    kernels::pack_flat({Tensor::zeros({2}, DType::FLOAT32, fake.place())}, flat, 0);
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "pack_flat has no kernel for fake");
  }
  EXPECT_THROW(kernels::pack_flat({Tensor::zeros({2})}, flat, 0), DeviceError);  // a host part
}

}  // namespace
}  // namespace crew
