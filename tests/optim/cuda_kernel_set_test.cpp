// The kernels the CUDA backend registers (crew/tensor/backends/cuda: register_*_kernels) are
// enough to train the seed's CNN with Adam: on the fake device with fake entries for exactly
// those slots, MyNet trains without meeting a slot that has no entry. Checked without a GPU, so
// that the GPU check (bench/gpu/check.sh) is not the first to find a missing kernel. Keep the
// list in step with the backend's registrations.
#include <gtest/gtest.h>

#include "crew/nn/nn.h"
#include "crew/optim/optim.h"
#include "crew/tensor/kernels/bucket_copy.h"
#include "crew/tensor/random.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels_core.h"
#include "tests/testing/fake_kernels_nn.h"

namespace crew::nn {
namespace {

using testing::set_fake_entry;

// The slots crew_cuda fills (besides fill and cast, which FakeDevice has itself).
void set_cuda_kernel_set(bool on) {
  set_fake_entry<&kernels::binary_kernel>(on);
  set_fake_entry<&kernels::sum_to_kernel>(on);
  set_fake_entry<&kernels::affine_kernel>(on);
  set_fake_entry<&kernels::add_inplace_kernel>(on);
  set_fake_entry<&kernels::unary_kernel>(on);
  set_fake_entry<&kernels::sum_axis_kernel>(on);
  set_fake_entry<&kernels::argmax_kernel>(on);
  set_fake_entry<&kernels::sgd_update_kernel>(on);
  set_fake_entry<&kernels::momentum_update_kernel>(on);
  set_fake_entry<&kernels::adam_update_kernel>(on);
  set_fake_entry<&kernels::squared_norm_kernel>(on);
  set_fake_entry<&kernels::scale_kernel>(on);
  set_fake_entry<&kernels::clamp_kernel>(on);
  set_fake_entry<&kernels::pack_flat_kernel>(on);
  set_fake_entry<&kernels::unpack_flat_kernel>(on);
  set_fake_entry<&kernels::activation_forward_kernel>(on);
  set_fake_entry<&kernels::activation_backward_kernel>(on);
  set_fake_entry<&kernels::softmax_forward_kernel>(on);
  set_fake_entry<&kernels::softmax_backward_kernel>(on);
  set_fake_entry<&kernels::cross_entropy_forward_kernel>(on);
  set_fake_entry<&kernels::cross_entropy_backward_kernel>(on);
  set_fake_entry<&kernels::pool2d_forward_kernel>(on);
  set_fake_entry<&kernels::pool2d_backward_kernel>(on);
  set_fake_entry<&kernels::matmul_kernel>(on);
  set_fake_entry<&kernels::linear_forward_kernel>(on);
  set_fake_entry<&kernels::linear_backward_kernel>(on);
  set_fake_entry<&kernels::conv2d_forward_kernel>(on);
  set_fake_entry<&kernels::conv2d_backward_kernel>(on);
}

TEST(CudaKernelSet, CoversMyNetTrainingWithAdam) {
  testing::FakeDevice fake;
  set_cuda_kernel_set(true);
  seed(3);
  models::MyNet net;
  net.to(fake.place());
  optim::Adam opt(net.parameters(), optim::AdamOptions{.learning_rate = 1e-3});
  for (int s = 0; s < 3; ++s) {
    const Tensor x = uniform({4, 1, 28, 28}, 0, 1).to(fake.place());
    const Tensor y = Tensor::from_vector<int64_t>({1, 2, 3, s}).to(fake.place());
    Tensor loss = functional::cross_entropy(net(x), y);
    EXPECT_NO_THROW(loss.backward());
    opt.step();
    opt.clear_grad();
    EXPECT_TRUE(std::isfinite(loss.cpu().item()));
  }
  set_cuda_kernel_set(false);
}

}  // namespace
}  // namespace crew::nn
