#include "crew/io/dataset.h"

#include "crew/core/check.h"

namespace crew::io {

void check_sample_index(const char* what, int64_t index, int64_t size) {
  CREW_CHECK_T(IndexError, index >= 0 && index < size, what, ": index ", index,
               " out of range for a data set of ", size, " samples");
}

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  CREW_CHECK(!tensors_.empty(), "TensorDataset: needs at least one tensor");
  for (size_t k = 0; k < tensors_.size(); ++k) {
    CREW_CHECK(tensors_[k].defined(), "TensorDataset: tensor ", k, " is undefined");
    CREW_CHECK(tensors_[k].dim() >= 1, "TensorDataset: tensor ", k, " is a scalar; need axis 0");
    CREW_CHECK_EQ(tensors_[k].size(0), tensors_[0].size(0),
                  str_cat("TensorDataset: tensor ", k, " has a different number of rows than tensor 0").c_str());
  }
  size_ = tensors_[0].size(0);
}

Sample TensorDataset::get(int64_t index) const {
  check_sample_index("TensorDataset::get", index, size_);
  Sample sample;
  sample.reserve(tensors_.size());
  for (const Tensor& t : tensors_) sample.push_back(t.select(index));
  return sample;
}

}  // namespace crew::io
