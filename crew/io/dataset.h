#pragma once
// Random-access data sets, as paddle.io.Dataset: size() samples, get(i) returns one sample,
// a list of tensors (for images: {image, label}).
//
//   auto ds = std::make_shared<crew::io::TensorDataset>(std::vector<Tensor>{x, y});
//   crew::io::Sample s = ds->get(3);     // {x[3], y[3]}
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::io {

// One sample: its fields in a fixed order (e.g. {image [C, H, W] float32, label int64 []}).
using Sample = std::vector<Tensor>;

// A random-access data set. get() must be safe to call from several threads at once
// (DataLoader workers do), so implementations keep get() free of mutable state.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Sample i, 0 <= i < size(); throws IndexError otherwise.
  virtual Sample get(int64_t index) const = 0;
};

// Samples are rows of the given tensors (all with the same extent on axis 0); get(i)
// returns views of row i of each tensor.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const override { return size_; }
  Sample get(int64_t index) const override;

 private:
  std::vector<Tensor> tensors_;
  int64_t size_ = 0;
};

// Throws IndexError "<what>: index <i> out of range for a data set of <n> samples".
void check_sample_index(const char* what, int64_t index, int64_t size);

}  // namespace crew::io
