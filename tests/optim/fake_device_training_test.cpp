// The device seam end to end: the seed's CNN trained with Adam on the fake device (host memory
// behind a place host code may not touch, every kernel through its slot's fake entry) takes
// the same steps as on the CPU, bit for bit. A loop above the kernels that touched elements
// itself would stop this with a DeviceError. (In the optim suite: it needs crew_optim.)
#include <gtest/gtest.h>

#include <cstring>

#include "crew/nn/nn.h"
#include "crew/optim/optim.h"
#include "crew/tensor/random.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"

namespace crew::nn {
namespace {

namespace F = functional;

struct TrainedRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> parameters;
};

TrainedRun train_my_net(const Place& place, int steps) {
  seed(21);
  models::MyNet net;
  net.to(place);
  optim::Adam opt(net.parameters(), optim::AdamOptions{.learning_rate = 2e-3});
  TrainedRun run;
  for (int s = 0; s < steps; ++s) {
    const Tensor x = uniform({8, 1, 28, 28}, 0, 1);
    std::vector<int64_t> labels(8);
    for (int64_t i = 0; i < 8; ++i) labels[static_cast<size_t>(i)] = (i * 7 + s) % 10;
    Tensor loss = F::cross_entropy(net(x.to(place)), Tensor::from_vector<int64_t>(labels).to(place));
    EXPECT_EQ(loss.place(), place);
    run.losses.push_back(static_cast<float>(loss.cpu().item()));
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  for (const Tensor& p : net.parameters()) {
    EXPECT_EQ(p.place(), place);
    run.parameters.push_back(p.cpu().to_vector<float>());
  }
  return run;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(FakeDeviceTraining, MyNetTwentyAdamStepsAreBitEqualToTheCpu) {
  const TrainedRun cpu = train_my_net(CPUPlace(), 20);
  testing::FakeDevice fake;
  testing::FakeKernels fake_kernels;
  const int before = testing::fake_entry_calls();
  const TrainedRun on_fake = train_my_net(fake.place(), 20);
  EXPECT_GT(testing::fake_entry_calls() - before, 20 * 10);  // every op of every step went through a slot
  EXPECT_TRUE(bit_equal(cpu.losses, on_fake.losses));
  ASSERT_EQ(cpu.parameters.size(), on_fake.parameters.size());
  for (size_t i = 0; i < cpu.parameters.size(); ++i) EXPECT_TRUE(bit_equal(cpu.parameters[i], on_fake.parameters[i])) << i;
  EXPECT_LT(cpu.losses.back(), cpu.losses.front());  // it trained
}

}  // namespace
}  // namespace crew::nn
