// autograd's ops on the fake device (tests/testing/fake_device.h): each op's forward and
// backward runs through the kernels' slots on device memory and gives the CPU's bits.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "crew/autograd/indexing.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/tensor/kernels/linear.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"

namespace crew {
namespace {

using testing::FakeDevice;
using Op = std::function<Tensor(const std::vector<Tensor>&)>;

// Values in [lo, hi), reproducible per seed.
Tensor sample(const Shape& shape, unsigned seed, DType dtype = DType::FLOAT32, double lo = -1.0,
              double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = u(gen);
  return Tensor::from_vector<double>(v, shape).to(dtype);
}

struct Run {
  Tensor y;
  std::vector<Tensor> grads;
};

// op on copies of `inputs` (requiring gradients) on `place`, then backward with a fixed
// upstream gradient; returns the output and the inputs' gradients.
Run run_on(const Place& place, const std::vector<Tensor>& inputs, const Op& op) {
  std::vector<Tensor> xs;
  for (const Tensor& t : inputs) {
    Tensor x = t.clone().to(place);
    x.set_stop_gradient(false);
    xs.push_back(x);
  }
  Run r;
  r.y = op(xs);
  EXPECT_EQ(r.y.place(), place);
  r.y.backward(sample(r.y.shape(), 99, r.y.dtype()).to(place));
  for (const Tensor& x : xs) {
    EXPECT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().place(), place);
    r.grads.push_back(x.grad());
  }
  return r;
}

void expect_same_bits(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  EXPECT_EQ(want.to_vector<double>(), got.cpu().to_vector<double>()) << what;
}

// The op on the fake device matches the CPU bit for bit, forward and backward.
// views_only: an op of views alone, which runs no kernel.
void expect_fake_matches_cpu(const std::string& name, const std::vector<Tensor>& inputs, const Op& op,
                             bool views_only = false) {
  SCOPED_TRACE(name);
  const Run want = run_on(CPUPlace(), inputs, op);
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  const int before = testing::fake_entry_calls();
  const Run got = run_on(fake.place(), inputs, op);
  if (!views_only) EXPECT_GT(testing::fake_entry_calls(), before) << name << " ran no fake kernel entry";
  expect_same_bits(want.y, got.y, name + " forward");
  for (size_t i = 0; i < want.grads.size(); ++i) {
    expect_same_bits(want.grads[i], got.grads[i], name + " gradient " + std::to_string(i));
  }
}

TEST(FakeDeviceOps, ArithmeticWithBroadcasting) {
  const Tensor a = sample({2, 3, 4}, 1), b = sample({3, 1}, 2), c = sample({4}, 3, DType::FLOAT32, 0.5, 2.0);
  expect_fake_matches_cpu("add", {a, b}, [](const auto& x) { return add(x[0], x[1]); });
  expect_fake_matches_cpu("sub", {a, b}, [](const auto& x) { return sub(x[0], x[1]); });
  expect_fake_matches_cpu("mul", {a, b}, [](const auto& x) { return mul(x[0], x[1]); });
  expect_fake_matches_cpu("div", {a, c}, [](const auto& x) { return div(x[0], x[1]); });
  expect_fake_matches_cpu("scalars", {a}, [](const auto& x) { return neg(mul(add(x[0], 0.5), 3.0)); });
  // x used twice: the engine accumulates two gradients on the device.
  expect_fake_matches_cpu("accumulate", {a}, [](const auto& x) { return add(mul(x[0], x[0]), x[0]); });
}

TEST(FakeDeviceOps, UnaryMath) {
  const Tensor pos = sample({5, 7}, 4, DType::FLOAT64, 0.1, 3.0);
  expect_fake_matches_cpu("exp", {pos}, [](const auto& x) { return exp(x[0]); });
  expect_fake_matches_cpu("log", {pos}, [](const auto& x) { return log(x[0]); });
  expect_fake_matches_cpu("pow", {pos}, [](const auto& x) { return pow(x[0], 2.5); });
}

// The tensor math of issue 30: every op's kernels run through their slots on the device.
TEST(FakeDeviceOps, TensorMath) {
  const Tensor a = sample({3, 4}, 11, DType::FLOAT64), b = sample({4}, 12, DType::FLOAT64);
  expect_fake_matches_cpu("sigmoid clip", {a}, [](const auto& x) { return clip(sigmoid(x[0]), 0.3, 0.6); });
  expect_fake_matches_cpu("where", {a, b}, [](const auto& x) {
    return where(greater_than(x[0], Tensor::zeros({}, DType::FLOAT64).to(x[0].place())), x[0], x[1]);
  });
  expect_fake_matches_cpu("topk cumsum", {a}, [](const auto& x) { return cumsum(topk(x[0], 2, 1).values, 0); });
  expect_fake_matches_cpu("cumprod log1p", {a}, [](const auto& x) { return cumprod(log1p(abs(x[0])), 1); });
  expect_fake_matches_cpu("prod var", {a}, [](const auto& x) { return add(prod(x[0], {1}), var(x[0], {1})); });
  expect_fake_matches_cpu("flip tile", {b}, [](const auto& x) { return tile(flip(x[0], {0}), {2, 1}); });
  expect_fake_matches_cpu("gather_nd scatter", {a, b}, [](const auto& x) {
    const Place p = x[0].place();
    Tensor rows = Tensor::from_vector<int64_t>({2, 0}, {2}).to(p);
    Tensor upd = reshape(expand(x[1], {2, 4}), {2, 4});
    return gather_nd(scatter(x[0], rows, upd, false), Tensor::from_vector<int64_t>({1, 0}, {1, 2}).to(p));
  });
  expect_fake_matches_cpu("index and mask", {a}, [](const auto& x) {
    Tensor m = greater_than(x[0], Tensor::zeros({}, DType::FLOAT64).to(x[0].place()));
    Tensor picked = index(x[0], {TensorIndex::slice({}, {}, -2), TensorIndex::none(), TensorIndex::integer(1)});
    return concat({reshape(picked, {-1}), masked_select(x[0], m)}, 0);
  });
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  Tensor d = a.clone().to(fake.place());
  index_put_(d, {TensorIndex::integer(0)}, Tensor::scalar(2.0, DType::FLOAT64));
  EXPECT_TRUE(allclose(index(d, {TensorIndex::integer(0)}), Tensor::full({4}, 2.0, DType::FLOAT64).to(fake.place())));
}

TEST(FakeDeviceOps, Matmul) {
  expect_fake_matches_cpu("matmul batched", {sample({2, 3, 4, 5}, 5), sample({3, 5, 6}, 6)},
                          [](const auto& x) { return matmul(x[0], x[1]); });
  expect_fake_matches_cpu("matmul 2-d b, transposed", {sample({2, 4, 5}, 7), sample({6, 5}, 8)},
                          [](const auto& x) { return matmul(x[0], x[1], false, true); });
  expect_fake_matches_cpu("matmul float64",
                          {sample({3, 4}, 9, DType::FLOAT64), sample({4, 2}, 10, DType::FLOAT64)},
                          [](const auto& x) { return matmul(x[0], x[1], false, false); });
}

// nn::functional::linear's kernels (crew_autograd's tests do not link nn; the wrapper only
// validates and records these two calls).
TEST(FakeDeviceOps, LinearKernels) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + (with_bias ? " with bias" : " without bias"));
      const Tensor x = sample({2, 3, 8}, 11, dt), w = sample({8, 5}, 12, dt);
      const Tensor b = with_bias ? sample({5}, 13, dt) : Tensor(), g = sample({2, 3, 5}, 14, dt);
      const Tensor y = kernels::linear_forward(x, w, b);
      const std::vector<Tensor> grads = kernels::linear_backward(g, x, w, {true, true, with_bias});
      FakeDevice fake;
      testing::FakeKernels fake_kernels;
      const Place at = fake.place();
      const Tensor fb = with_bias ? b.to(at) : Tensor();
      expect_same_bits(y, kernels::linear_forward(x.to(at), w.to(at), fb), "forward");
      const std::vector<Tensor> got =
          kernels::linear_backward(g.to(at), x.to(at), w.to(at), {true, true, with_bias});
      ASSERT_EQ(got.size(), 3u);
      expect_same_bits(grads[0], got[0], "d x");
      expect_same_bits(grads[1], got[1], "d weight");
      EXPECT_EQ(got[2].defined(), with_bias);
      if (with_bias) expect_same_bits(grads[2], got[2], "d bias");
    }
  }
}

TEST(FakeDeviceOps, CopiesOfShapeOps) {
  const Tensor x = sample({2, 3, 4}, 16);
  expect_fake_matches_cpu("transpose2d", {sample({3, 5}, 17)},
                          [](const auto& v) { return transpose2d(v[0]); });
  expect_fake_matches_cpu("permute", {x}, [](const auto& v) { return permute(v[0], {2, 0, 1}); });
  expect_fake_matches_cpu("transpose", {x}, [](const auto& v) { return transpose(v[0], 0, -1); });
  expect_fake_matches_cpu("slice", {x}, [](const auto& v) { return slice(v[0], 1, 1, 3); });
  expect_fake_matches_cpu("split", {x}, [](const auto& v) {
    std::vector<Tensor> parts = split(v[0], 2, 2);
    return sub(parts[0], parts[1]);
  });
  expect_fake_matches_cpu("concat", {x, sample({2, 1, 4}, 18)}, [](const auto& v) { return concat(v, 1); });
  expect_fake_matches_cpu(
      "views", {x},
      [](const auto& v) {
        return squeeze(unsqueeze(reshape(v[0], {4, 6}), 0), 0);
      },
      true);
}

TEST(FakeDeviceOps, Reductions) {
  const Tensor x = sample({3, 4, 5}, 19);
  expect_fake_matches_cpu("sum", {x}, [](const auto& v) { return sum(v[0]); });
  expect_fake_matches_cpu("mean", {x}, [](const auto& v) { return mean(v[0]); });
  expect_fake_matches_cpu("sum axis", {x}, [](const auto& v) { return sum(v[0], 1); });
  expect_fake_matches_cpu("mean axis keepdim", {x}, [](const auto& v) { return mean(v[0], -1, true); });
}

TEST(FakeDeviceOps, ScalarBackwardSeedsOnTheDeviceAndArgmaxRuns) {
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  Tensor x = sample({4, 6}, 20).to(fake.place());
  x.set_stop_gradient(false);
  mean(mul(x, x)).backward();  // the seed gradient (ones) is made on the device
  EXPECT_EQ(x.grad().place(), fake.place());
  Tensor host = sample({4, 6}, 20);
  host.set_stop_gradient(false);
  mean(mul(host, host)).backward();
  EXPECT_EQ(x.grad().cpu().to_vector<float>(), host.grad().to_vector<float>());
  const Tensor idx = argmax(x, 1);
  EXPECT_EQ(idx.place(), fake.place());
  EXPECT_EQ(idx.cpu().to_vector<int64_t>(), argmax(host, 1).to_vector<int64_t>());
  x.clear_grad(false);
  x.clear_grad(true);  // new zeros, on the device
  EXPECT_EQ(x.grad().place(), fake.place());
}

TEST(FakeDeviceOps, OperandsOnTwoPlacesAreRefused) {
  FakeDevice fake;
  testing::FakeKernels fake_kernels;
  const Tensor a = sample({2, 2}, 21);
  EXPECT_THROW(add(a, a.to(fake.place())), DeviceError);
  EXPECT_THROW(matmul(a.to(fake.place()), a), DeviceError);
  EXPECT_THROW(concat({a, a.to(fake.place())}, 0), DeviceError);
}

}  // namespace
}  // namespace crew
