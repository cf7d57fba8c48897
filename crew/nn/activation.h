#pragma once
// Parameter-free activation layers (Paddle's nn.ReLU, nn.Sigmoid, nn.Tanh, nn.GELU, nn.Softmax).
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class ReLU : public Layer {
 public:
  ReLU() : Layer("relu") {}
  Tensor forward(const Tensor& x) override;
};

class Sigmoid : public Layer {
 public:
  Sigmoid() : Layer("sigmoid") {}
  Tensor forward(const Tensor& x) override;
};

class Tanh : public Layer {
 public:
  Tanh() : Layer("tanh") {}
  Tensor forward(const Tensor& x) override;
};

class GELU : public Layer {
 public:
  explicit GELU(bool approximate = false) : Layer("gelu"), approximate_(approximate) {}
  Tensor forward(const Tensor& x) override;

 private:
  bool approximate_;
};

class Softmax : public Layer {
 public:
  explicit Softmax(int64_t axis = -1) : Layer("softmax"), axis_(axis) {}
  Tensor forward(const Tensor& x) override;

 private:
  int64_t axis_;
};

}  // namespace crew::nn
