// DataLoader on a GPU machine: pin_memory gives pinned batches, device= gives batches on the
// GPU copied by the workers; both with the values the plain loader gives.
#include <gtest/gtest.h>

#include "crew/io/dataloader.h"

namespace crew::io {
namespace {

class Numbers : public Dataset {
 public:
  int64_t size() const override { return 8; }
  Sample get(int64_t i) const override {
    return {Tensor::full({3}, static_cast<double>(i)), Tensor::scalar(static_cast<double>(i), DType::INT64)};
  }
};

TEST(CudaDataLoader, PinnedAndDeviceBatches) {
  auto data = std::make_shared<Numbers>();
  DataLoader pinned(data, {.batch_size = 4, .num_workers = 2, .pin_memory = true});
  for (auto& b : pinned) EXPECT_EQ(b[0].place(), CUDAPinnedPlace());
  DataLoader on_gpu(data, {.batch_size = 4, .num_workers = 2, .device = CUDAPlace(0)});
  int64_t first = 0;
  for (auto& b : on_gpu) {
    ASSERT_EQ(b[0].place(), CUDAPlace(0));
    EXPECT_EQ(b[1].to_vector<int64_t>(), (std::vector<int64_t>{first, first + 1, first + 2, first + 3}));
    first += 4;
  }
  EXPECT_EQ(first, 8);
}

}  // namespace
}  // namespace crew::io
