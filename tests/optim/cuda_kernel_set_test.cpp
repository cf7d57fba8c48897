// The kernels the CUDA backend registers (crew/tensor/backends/cuda: register_*_kernels) are
// enough to train the seed's CNN with Adam, ResNet-18 with Momentum and the GPT with AdamW: on the fake
// device with fake entries for exactly those slots, MyNet trains without meeting a slot that has no entry.
// Checked without a GPU, so that the GPU check (bench/gpu/check.sh) is not the first to find a missing
// kernel. Keep the list in step with the backend's registrations.
#include <gtest/gtest.h>

#include "crew/autograd/ops.h"
#include "crew/nn/models/gpt.h"
#include "crew/nn/models/resnet.h"
#include "crew/nn/nn.h"
#include "crew/optim/grad_clip.h"
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
  // nn_ops.cpp: ResNet-18's and the GPT's
  set_fake_entry<&kernels::batch_norm_channel_sums_kernel>(on);
  set_fake_entry<&kernels::batch_norm_channel_sq_dev_kernel>(on);
  set_fake_entry<&kernels::batch_norm_normalize_kernel>(on);
  set_fake_entry<&kernels::batch_norm_grad_sums_kernel>(on);
  set_fake_entry<&kernels::batch_norm_input_grad_kernel>(on);
  set_fake_entry<&kernels::batch_norm_update_running_kernel>(on);
  set_fake_entry<&kernels::batch_norm_forward_kernel>(on);
  set_fake_entry<&kernels::batch_norm_backward_kernel>(on);
  set_fake_entry<&kernels::layer_norm_forward_kernel>(on);
  set_fake_entry<&kernels::layer_norm_backward_kernel>(on);
  set_fake_entry<&kernels::embedding_forward_kernel>(on);
  set_fake_entry<&kernels::embedding_backward_kernel>(on);
  set_fake_entry<&kernels::dropout_mask_kernel>(on);
  set_fake_entry<&kernels::adaptive_avg_pool2d_forward_kernel>(on);
  set_fake_entry<&kernels::adaptive_avg_pool2d_backward_kernel>(on);
  set_fake_entry<&kernels::attention_forward_kernel>(on);
  set_fake_entry<&kernels::attention_backward_kernel>(on);
  set_fake_entry<&kernels::attention_mask_softmax_kernel>(on);
  set_fake_entry<&kernels::permute_kernel>(on);
  set_fake_entry<&kernels::slice_axis_kernel>(on);
  set_fake_entry<&kernels::slice_scatter_kernel>(on);
  set_fake_entry<&kernels::concat_kernel>(on);
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

TEST(CudaKernelSet, CoversResNet18TrainingWithMomentum) {
  testing::FakeDevice fake;
  set_cuda_kernel_set(true);
  seed(3);
  auto net = models::resnet18(10);
  net->to(fake.place());
  optim::Momentum opt(net->parameters(), optim::MomentumOptions{.learning_rate = 1e-2});
  const Tensor x = uniform({2, 3, 32, 32}, 0, 1).to(fake.place());
  const Tensor y = Tensor::from_vector<int64_t>({1, 2}).to(fake.place());
  Tensor loss = functional::cross_entropy((*net)(x), y);
  EXPECT_NO_THROW(loss.backward());
  opt.step();
  EXPECT_TRUE(std::isfinite(loss.cpu().item()));
  set_cuda_kernel_set(false);
}

TEST(CudaKernelSet, CoversGptTrainingWithAdamWAndClipping) {
  testing::FakeDevice fake;
  set_cuda_kernel_set(true);
  seed(3);
  models::GPT gpt(models::GPTConfig{
      .vocab_size = 32, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16, .dropout = 0.1});
  gpt.to(fake.place());
  optim::AdamW opt(gpt.parameters(),
                   optim::AdamWOptions{.learning_rate = 1e-3,
                                       .grad_clip = std::make_shared<optim::ClipGradByGlobalNorm>(1.0)});
  const Tensor idx = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 8}).to(fake.place());
  const Tensor tgt = Tensor::from_vector<int64_t>({2, 3, 4, 5, 6, 7, 8, 9}, {1, 8}).to(fake.place());
  Tensor logits = gpt(idx);
  Tensor loss = functional::cross_entropy(crew::reshape(logits, {8, 32}), crew::reshape(tgt, {8}));
  EXPECT_NO_THROW(loss.backward());
  opt.step();
  EXPECT_TRUE(std::isfinite(loss.cpu().item()));
  set_cuda_kernel_set(false);
}

}  // namespace
}  // namespace crew::nn
