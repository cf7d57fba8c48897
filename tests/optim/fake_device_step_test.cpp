// Optimizer steps with gradient clipping on the fake device (tests/testing/fake_device.h):
// the updates and the clipping run through the kernels' slots on device memory and give the
// CPU's bits, and the state (moments on the device, beta powers on the host) round-trips.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>
#include <random>

#include "crew/optim/optim.h"
#include "crew/tensor/kernels/broadcast.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"

namespace crew::optim {
namespace {

using testing::FakeDevice;
using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;

Tensor sample(const Shape& shape, unsigned seed, DType dtype) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = u(gen);
  return Tensor::from_vector<double>(v, shape).to(dtype);
}

// Parameters of a few sizes (37 elements: the vector loops' tails run too).
std::vector<Tensor> parameters_on(const Place& place, DType dtype) {
  std::vector<Tensor> ps;
  unsigned seed = 1;
  for (const Shape& s : {Shape{37}, Shape{5, 9}, Shape{16}}) {
    Tensor p = sample(s, seed++, dtype).to(place);
    p.set_stop_gradient(false);
    ps.push_back(p);
  }
  return ps;
}

// Three steps with fresh gradients each; returns the parameters and the state on the host.
std::pair<std::vector<Tensor>, StateDict> train(const Place& place, DType dtype, const MakeOptimizer& make) {
  std::vector<Tensor> ps = parameters_on(place, dtype);
  std::unique_ptr<Optimizer> opt = make(ps);
  for (unsigned step = 0; step < 3; ++step) {
    for (size_t i = 0; i < ps.size(); ++i)
      ps[i].set_grad(sample(ps[i].shape(), 100 + 10 * step + i, dtype).to(place));
    opt->step();
  }
  std::vector<Tensor> host;
  for (const Tensor& p : ps) {
    EXPECT_EQ(p.place(), place);
    host.push_back(p.cpu());
  }
  return {host, opt->state_dict()};
}

void expect_fake_matches_cpu(const std::string& name, const MakeOptimizer& make) {
  for (DType dtype : {DType::FLOAT32, DType::FLOAT64}) {
    SCOPED_TRACE(name + " " + dtype_name(dtype));
    const auto [want, want_state] = train(CPUPlace(), dtype, make);
    FakeDevice fake;
    testing::FakeKernels fake_kernels;
    const int before = testing::fake_entry_calls();
    const auto [got, got_state] = train(fake.place(), dtype, make);
    EXPECT_GT(testing::fake_entry_calls(), before);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(want[i].to_vector<double>(), got[i].to_vector<double>()) << "parameter " << i;
    }
    ASSERT_EQ(want_state.size(), got_state.size());
    for (const auto& [key, t] : want_state) {
      EXPECT_EQ(t.to_vector<double>(), got_state.at(key).to_vector<double>()) << key;
    }
  }
}

TEST(FakeDeviceStep, AdamWithGlobalNormClipping) {
  expect_fake_matches_cpu("Adam", [](std::vector<Tensor> ps) {
    return std::make_unique<Adam>(ps, AdamOptions{.learning_rate = 0.01,
                                                  .weight_decay = 0.01,
                                                  .grad_clip = std::make_shared<ClipGradByGlobalNorm>(1.0)});
  });
}

TEST(FakeDeviceStep, AdamWWithNormClipping) {
  expect_fake_matches_cpu("AdamW", [](std::vector<Tensor> ps) {
    return std::make_unique<AdamW>(ps, AdamWOptions{.learning_rate = 0.01,
                                                    .weight_decay = 0.1,
                                                    .grad_clip = std::make_shared<ClipGradByNorm>(0.5)});
  });
}

TEST(FakeDeviceStep, SgdAndMomentumWithValueClipping) {
  expect_fake_matches_cpu("SGD", [](std::vector<Tensor> ps) {
    return std::make_unique<SGD>(ps, SGDOptions{.learning_rate = 0.1,
                                                .weight_decay = 0.01,
                                                .grad_clip = std::make_shared<ClipGradByValue>(0.5)});
  });
  for (bool nesterov : {false, true}) {
    expect_fake_matches_cpu("Momentum", [nesterov](std::vector<Tensor> ps) {
      return std::make_unique<Momentum>(
          ps, MomentumOptions{.learning_rate = 0.1,
                              .momentum = 0.9,
                              .use_nesterov = nesterov,
                              .weight_decay = 0.01,
                              .grad_clip = std::make_shared<ClipGradByGlobalNorm>(1.0)});
    });
  }
}

TEST(FakeDeviceStep, StateLoadedFromTheHostResumesOnTheDevice) {
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  // Two steps on the CPU, save; a device optimizer loads the state and takes the third step.
  std::vector<Tensor> host = parameters_on(CPUPlace(), DType::FLOAT32);
  Adam cpu_opt(host, {.learning_rate = 0.01});
  auto step = [](Optimizer& opt, std::vector<Tensor>& ps, unsigned n, const Place& place) {
    for (size_t i = 0; i < ps.size(); ++i)
      ps[i].set_grad(sample(ps[i].shape(), 200 + n + i, DType::FLOAT32).to(place));
    opt.step();
  };
  step(cpu_opt, host, 0, CPUPlace());
  step(cpu_opt, host, 1, CPUPlace());
  std::vector<Tensor> dev;
  for (const Tensor& p : host) {
    Tensor d = p.to(fake.place());
    d.set_stop_gradient(false);
    dev.push_back(d);
  }
  Adam dev_opt(dev, {.learning_rate = 0.01});
  dev_opt.set_state_dict(cpu_opt.state_dict());
  step(cpu_opt, host, 2, CPUPlace());
  step(dev_opt, dev, 2, fake.place());
  for (size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(host[i].to_vector<float>(), dev[i].cpu().to_vector<float>()) << "parameter " << i;
  }
}

// The loss scaler's unscale and inf/NaN check run through their slot on device memory: a
// step with an inf is skipped, a finite one matches the CPU's.
TEST(FakeDeviceStep, GradScalerSkipsAnInfAndUnscalesOnTheDevice) {
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  auto run = [](const Place& place) {
    std::vector<Tensor> ps = parameters_on(place, DType::FLOAT32);
    SGD opt(ps, {.learning_rate = 0.1});
    GradScaler scaler({.init_loss_scaling = 64, .decr_every_n_nan_or_inf = 1});
    for (unsigned step = 0; step < 2; ++step) {
      for (size_t i = 0; i < ps.size(); ++i) {
        Tensor g = sample(ps[i].shape(), 200 + 10 * step + i, DType::FLOAT32);
        if (step == 0 && i == 1)
          g = Tensor::full(g.shape(), std::numeric_limits<double>::infinity(), DType::FLOAT32);
        ps[i].set_grad(kernels::affine(g, scaler.scale(), 0.0).to(place));
      }
      EXPECT_EQ(scaler.minimize(opt), step == 1);
    }
    EXPECT_EQ(scaler.scale(), 32);
    std::vector<Tensor> host;
    for (const Tensor& p : ps) host.push_back(p.cpu());
    return host;
  };
  const std::vector<Tensor> want = run(CPUPlace());
  const int before = testing::fake_entry_calls();
  const std::vector<Tensor> got = run(fake.place());
  EXPECT_GT(testing::fake_entry_calls(), before);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].to_vector<float>(), got[i].to_vector<float>()) << "parameter " << i;
  }
}

}  // namespace
}  // namespace crew::optim
