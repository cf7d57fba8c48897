#include "crew/nn/sequential.h"

#include <string>

#include "crew/core/check.h"

namespace crew::nn {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers) : Layer("sequential") {
  for (auto& l : layers) append(std::move(l));
}

void Sequential::append(std::shared_ptr<Layer> layer) {
  CREW_CHECK(layer != nullptr, full_name(), ".append: layer ", layers_.size(), " is null");
  register_sublayer(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& l : layers_) y = l->forward(y);
  return y;
}

std::shared_ptr<Layer> Sequential::operator[](int64_t i) const {
  int64_t n = static_cast<int64_t>(layers_.size());
  CREW_CHECK_T(IndexError, i >= -n && i < n, full_name(), ": index ", i, " out of range for ", n, " layers");
  return layers_[static_cast<size_t>(i < 0 ? i + n : i)];
}

}  // namespace crew::nn
