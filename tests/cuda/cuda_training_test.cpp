// The seed's CNN (MyNet) trained 20 Adam steps on the GPU from the same weights and batches as
// on the CPU: every loss within 1e-4 (relative) of the CPU's, and it trains.
#include <gtest/gtest.h>

#include <cmath>

#include "crew/nn/nn.h"
#include "crew/optim/optim.h"
#include "crew/tensor/random.h"

namespace crew::nn {
namespace {

namespace F = functional;

std::vector<float> train_my_net(const Place& place, int steps) {
  seed(21);
  models::MyNet net;
  net.to(place);
  optim::Adam opt(net.parameters(), optim::AdamOptions{.learning_rate = 2e-3});
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    const Tensor x = uniform({8, 1, 28, 28}, 0, 1);
    std::vector<int64_t> labels(8);
    for (int64_t i = 0; i < 8; ++i) labels[static_cast<size_t>(i)] = (i * 7 + s) % 10;
    Tensor loss = F::cross_entropy(net(x.to(place)), Tensor::from_vector<int64_t>(labels).to(place));
    EXPECT_EQ(loss.place(), place);
    losses.push_back(static_cast<float>(loss.cpu().item()));
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  return losses;
}

TEST(CudaTraining, MyNetTwentyAdamStepsFollowTheCpuTrace) {
  const std::vector<float> cpu = train_my_net(CPUPlace(), 20);
  const std::vector<float> gpu = train_my_net(Place{DeviceType::GPU, 0}, 20);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_LE(std::abs(cpu[i] - gpu[i]), 1e-4 * std::abs(cpu[i])) << "step " << i << ": cpu " << cpu[i] << " gpu " << gpu[i];
  EXPECT_LT(gpu.back(), gpu.front());
}

}  // namespace
}  // namespace crew::nn
