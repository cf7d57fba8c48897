#pragma once
// Sequential: Paddle's nn.Sequential. Runs its sublayers in order; they are named "0", "1", ...
// so state_dict keys read "0.weight", "2.bias".
//
//   auto net = std::make_shared<Sequential>(std::make_shared<Linear>(4, 8),
//                                           std::make_shared<ReLU>(),
//                                           std::make_shared<Linear>(8, 2));
//   Tensor y = (*net)(x);
#include <cstddef>
#include <memory>
#include <vector>

#include "crew/nn/layer.h"

namespace crew::nn {

class Sequential : public Layer {
 public:
  Sequential() : Layer("sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers);
  template <typename... Ls>
  explicit Sequential(std::shared_ptr<Ls>... layers)
      : Sequential(std::vector<std::shared_ptr<Layer>>{std::move(layers)...}) {}

  // Appends a layer under the next index name.
  void append(std::shared_ptr<Layer> layer);
  Tensor forward(const Tensor& x) override;

  size_t size() const { return layers_.size(); }
  // The i-th layer (negative counts from the end); IndexError when out of range.
  std::shared_ptr<Layer> operator[](int64_t i) const;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace crew::nn
