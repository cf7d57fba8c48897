// Tensor's own element loops (to_vector, item, to_string, clone, copy_) on a tensor whose
// memory host code may not touch: they copy through the host (tests/testing/fake_device.h).
#include <gtest/gtest.h>

#include "crew/tensor/tensor.h"
#include "tests/testing/fake_device.h"

namespace crew {
namespace {

using testing::FakeDevice;

TEST(TensorOnDevice, HostLoopsCopyThroughTheHost) {
  FakeDevice fake;
  const Tensor host = Tensor::from_vector<double>({1.5, -2, 3, 4, 5, 6}, {3, 2});
  const Tensor dev = host.to(fake.place());
  const Tensor row = dev.select(1);  // a view with an offset
  EXPECT_EQ(row.place(), fake.place());
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(dev.select(0).select(0).item(), 1.5);
  EXPECT_EQ(row.to_string(), "Tensor(shape=[2], dtype=float64, [3, 4])");
  const Tensor twin = row.clone();
  EXPECT_EQ(twin.place(), fake.place());
  EXPECT_EQ(twin.to_vector<double>(), (std::vector<double>{3, 4}));
  Tensor back = Tensor::zeros({2}, DType::FLOAT64);
  back.copy_(dev.select(2));
  EXPECT_EQ(back.to_vector<double>(), (std::vector<double>{5, 6}));
  EXPECT_THROW(dev.data<double>(), DeviceError);
}

}  // namespace
}  // namespace crew
