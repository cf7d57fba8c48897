#include "crew/nn/models/my_net.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn::models {

int64_t MyNet::flat_features(int64_t image_size) {
  int64_t s = image_size;
  s = (s - 2) / 2;  // conv1 (3x3, valid), pool1
  s = (s - 2) / 2;  // conv2, pool2
  s = s - 2;        // conv3
  CREW_CHECK(s >= 1, "MyNet: image_size ", image_size, " is too small (needs at least 14)");
  return 64 * s * s;
}

MyNet::MyNet(int64_t num_classes, int64_t in_channels, int64_t image_size)
    : Layer("my_net"), num_classes_(num_classes), in_channels_(in_channels), image_size_(image_size) {
  CREW_CHECK(num_classes > 0, "MyNet: num_classes must be positive, got ", num_classes);
  int64_t flat = flat_features(image_size);
  conv1_ = register_sublayer("conv1", std::make_shared<Conv2D>(in_channels, 32, 3));
  pool1_ = register_sublayer("pool1", std::make_shared<MaxPool2D>(2, 2));
  conv2_ = register_sublayer("conv2", std::make_shared<Conv2D>(32, 64, 3));
  pool2_ = register_sublayer("pool2", std::make_shared<MaxPool2D>(2, 2));
  conv3_ = register_sublayer("conv3", std::make_shared<Conv2D>(64, 64, 3));
  flatten_ = register_sublayer("flatten", std::make_shared<Flatten>());
  linear1_ = register_sublayer("linear1", std::make_shared<Linear>(flat, 64));
  linear2_ = register_sublayer("linear2", std::make_shared<Linear>(64, num_classes));
}

Tensor MyNet::forward(const Tensor& x) {
  namespace F = functional;
  CREW_CHECK(
      x.dim() == 4 && x.size(1) == in_channels_ && x.size(2) == image_size_ && x.size(3) == image_size_,
      full_name(), ": expected input [N, ", in_channels_, ", ", image_size_, ", ", image_size_, "], got ",
      shape_str(x.shape()));
  Tensor h = (*pool1_)(F::relu((*conv1_)(x)));
  h = (*pool2_)(F::relu((*conv2_)(h)));
  h = (*flatten_)(F::relu((*conv3_)(h)));
  h = F::relu((*linear1_)(h));
  return (*linear2_)(h);
}

}  // namespace crew::nn::models
