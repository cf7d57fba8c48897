// Every kernel entry of the CUDA backend against the CPU entry of the same kernel, on random
// inputs: the GPU result (copied back) within a float32 tolerance of the CPU's.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/cross_entropy.h"
#include "crew/tensor/kernels/elementwise.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/grad_clip.h"
#include "crew/tensor/kernels/linear.h"
#include "crew/tensor/kernels/optimizer_update.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/reduce.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/random.h"

namespace crew::kernels {
namespace {

const Place kGpu{DeviceType::GPU, 0};

Tensor rand(const Shape& s, double lo = -1, double hi = 1) { return uniform(s, lo, hi); }
Tensor gpu(const Tensor& t) { return t.to(kGpu); }

// |gpu - cpu| <= tol * (1 + |cpu|) everywhere, NaN never passing.
void expect_close(const Tensor& cpu, const Tensor& on_gpu, double tol = 1e-5) {
  ASSERT_EQ(on_gpu.place(), kGpu);
  ASSERT_EQ(cpu.shape(), on_gpu.shape());
  const std::vector<float> a = cpu.to_vector<float>(), b = on_gpu.cpu().to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(b[i])) << "element " << i;
    ASSERT_LE(std::abs(a[i] - b[i]), tol * (1 + std::abs(a[i]))) << "element " << i << ": cpu " << a[i] << " gpu " << b[i];
  }
}

TEST(CudaKernels, CopiesRoundTrip) {
  const Tensor x = rand({3, 5, 7});
  expect_close(x, gpu(x), 0);
  const Tensor pinned = x.to(Place{DeviceType::GPU_PINNED, 0});
  expect_close(x, gpu(pinned), 0);
  Tensor z = Tensor::zeros({4}, DType::FLOAT32, kGpu);
  EXPECT_EQ(z.cpu().to_vector<float>(), std::vector<float>(4, 0.0f));
  z.fill_(2.5);
  EXPECT_EQ(z.cpu().to_vector<float>(), std::vector<float>(4, 2.5f));
  EXPECT_EQ(gpu(x).to(DType::FLOAT64).cpu().to_vector<double>(), x.to(DType::FLOAT64).to_vector<double>());
}

TEST(CudaKernels, BinaryBroadcastSumToAffine) {
  const Tensor a = rand({4, 1, 6}), b = rand({3, 1});
  for (BinaryOp op : {BinaryOp::ADD, BinaryOp::SUB, BinaryOp::MUL, BinaryOp::DIV}) {
    const Tensor bb = op == BinaryOp::DIV ? rand({3, 1}, 0.5, 2) : b;
    expect_close(binary(op, a, bb, "test"), binary(op, gpu(a), gpu(bb), "test"));
  }
  const Tensor g = rand({4, 3, 6});
  expect_close(sum_to(g, {3, 1}), sum_to(gpu(g), {3, 1}));
  expect_close(sum_to(g, {6}), sum_to(gpu(g), {6}));
  expect_close(affine(a, 1.5, -0.25), affine(gpu(a), 1.5, -0.25));
  Tensor d = rand({5}), s = rand({5});
  Tensor dg = gpu(d);
  add_inplace(d, s);
  add_inplace(dg, gpu(s));
  expect_close(d, dg);
}

TEST(CudaKernels, UnaryAndActivations) {
  const Tensor x = rand({7, 9}, 0.1, 2);
  for (UnaryOp op : {UnaryOp::EXP, UnaryOp::LOG, UnaryOp::POW, UnaryOp::POW_GRAD})
    expect_close(unary(op, x, 2.5, "test"), unary(op, gpu(x), 2.5, "test"));
  const Tensor z = rand({7, 9}), gy = rand({7, 9});
  for (Activation k : {Activation::RELU, Activation::SIGMOID, Activation::TANH, Activation::GELU_ERF,
                       Activation::GELU_TANH}) {
    const Tensor y = activation_forward(k, z), yg = activation_forward(k, gpu(z));
    expect_close(y, yg);
    expect_close(activation_backward(k, gy, z, y), activation_backward(k, gpu(gy), gpu(z), yg));
  }
}

TEST(CudaKernels, ReductionsAndSoftmax) {
  const Tensor x = rand({3, 4, 5});
  for (int64_t axis = 0; axis < 3; ++axis) {
    expect_close(sum_axis(x, axis, true, 0.5), sum_axis(gpu(x), axis, true, 0.5));
    EXPECT_EQ(argmax(x, axis).to_vector<int64_t>(), argmax(gpu(x), axis).cpu().to_vector<int64_t>());
    for (bool log_out : {false, true}) {
      const Tensor y = softmax_forward(x, axis, log_out), yg = softmax_forward(gpu(x), axis, log_out);
      expect_close(y, yg);
      const Tensor g = rand({3, 4, 5});
      expect_close(softmax_backward(g, y, axis, log_out), softmax_backward(gpu(g), yg, axis, log_out));
    }
  }
}

TEST(CudaKernels, CrossEntropy) {
  const Tensor logits = rand({6, 10}, -3, 3);
  const Tensor labels = Tensor::from_vector<int64_t>({1, 0, 9, -100, 4, 4});
  auto [loss, probs, n] = cross_entropy_forward(logits, labels);
  auto [loss_g, probs_g, n_g] = cross_entropy_forward(gpu(logits), gpu(labels));
  expect_close(loss, loss_g);
  expect_close(probs, probs_g);
  EXPECT_EQ(n, n_g);
  const Tensor gy = Tensor::scalar(1.0);
  expect_close(cross_entropy_backward(probs, labels, gy, 1.0 / 5, false),
               cross_entropy_backward(probs_g, gpu(labels), gpu(gy), 1.0 / 5, false));
  const Tensor bad = Tensor::from_vector<int64_t>({1, 0, 12, 0, 0, 0});
  EXPECT_THROW(cross_entropy_forward(gpu(logits), gpu(bad)), IndexError);
}

TEST(CudaKernels, Pooling) {
  const Tensor x = rand({2, 3, 9, 8});
  for (PoolKind kind : {PoolKind::MAX, PoolKind::AVG}) {
    for (Pool2dParams p : {Pool2dParams{}, Pool2dParams{{3, 3}, {2, 2}, {1, 1}}}) {
      const PoolForwardResult c = pool2d_forward(kind, x, p, true, PoolImpl::DIRECT);
      const PoolForwardResult g = pool2d_forward(kind, gpu(x), p, true);
      expect_close(c.y, g.y);
      const Tensor gy = rand(c.y.shape());
      expect_close(pool2d_backward(kind, gy, x.shape(), c.workspace, p, PoolImpl::DIRECT),
                   pool2d_backward(kind, gpu(gy), x.shape(), g.workspace, p));
    }
  }
}

TEST(CudaKernels, ConvolutionForwardAndBackward) {
  const Tensor x = rand({2, 3, 10, 9}), w = rand({4, 3, 3, 3}), b = rand({4});
  Conv2dParams p;
  p.padding = {1, 0};
  p.stride = {2, 1};
  const Tensor y = conv2d_forward(x, w, b, p), yg = conv2d_forward(gpu(x), gpu(w), gpu(b), p);
  expect_close(y, yg, 1e-4);
  const Tensor gy = rand(y.shape());
  const Conv2dGrads c = conv2d_backward(gy, x, w, x.shape(), p);
  const Conv2dGrads g = conv2d_backward(gpu(gy), gpu(x), gpu(w), x.shape(), p);
  expect_close(c.grad_x, g.grad_x, 1e-4);
  expect_close(c.grad_weight, g.grad_weight, 1e-4);
  expect_close(c.grad_bias, g.grad_bias, 1e-4);
}

TEST(CudaKernels, MatmulAndLinear) {
  const Tensor a = rand({2, 3, 5, 7}), b = rand({2, 3, 7, 4}), b2 = rand({7, 4}), b1 = rand({1, 3, 7, 4});
  expect_close(matmul(a, b, false, false), matmul(gpu(a), gpu(b), false, false), 1e-4);
  expect_close(matmul(a, b2, false, false), matmul(gpu(a), gpu(b2), false, false), 1e-4);
  expect_close(matmul(a, b1, false, false), matmul(gpu(a), gpu(b1), false, false), 1e-4);
  const Tensor at = rand({2, 3, 7, 5}), bt = rand({2, 3, 4, 7});
  expect_close(matmul(at, bt, true, true), matmul(gpu(at), gpu(bt), true, true), 1e-4);
  const Tensor x = rand({6, 7}), w = rand({7, 3}), bias = rand({3});
  expect_close(linear_forward(x, w, bias), linear_forward(gpu(x), gpu(w), gpu(bias)), 1e-4);
  const Tensor gy = rand({6, 3});
  const std::vector<Tensor> c = linear_backward(gy, x, w, {}), g = linear_backward(gpu(gy), gpu(x), gpu(w), {});
  for (size_t i = 0; i < 3; ++i) expect_close(c[i], g[i], 1e-4);
}

TEST(CudaKernels, OptimizerStepsAndClipping) {
  const Tensor p0 = rand({37}), g = rand({37}), m0 = rand({37}, 0, 0.1), v0 = rand({37}, 0, 0.1);
  {
    Tensor p = p0.clone(), pg = gpu(p0);
    sgd_update(p, g, 0.1, 0.01);
    sgd_update(pg, gpu(g), 0.1, 0.01);
    expect_close(p, pg);
  }
  for (bool nesterov : {false, true}) {
    Tensor p = p0.clone(), v = m0.clone(), pg = gpu(p0), vg = gpu(m0);
    const MomentumCoefficients c{0.1, 0.9, 0.01, nesterov};
    momentum_update(p, g, v, c);
    momentum_update(pg, gpu(g), vg, c);
    expect_close(p, pg);
    expect_close(v, vg);
  }
  {
    Tensor p = p0.clone(), m1 = m0.clone(), m2 = v0.clone(), pg = gpu(p0), m1g = gpu(m0), m2g = gpu(v0);
    const AdamCoefficients c{0.9, 0.999, 1e-3, 1e-8, 0.0, 0.999};
    adam_update(p, g, m1, m2, c);
    adam_update(pg, gpu(g), m1g, m2g, c);
    expect_close(p, pg);
    expect_close(m1, m1g);
    expect_close(m2, m2g);
  }
  const Tensor big = rand({100003});
  EXPECT_NEAR(squared_norm(big), squared_norm(gpu(big)), 1e-9 * squared_norm(big));
  Tensor s = p0.clone(), sg = gpu(p0);
  scale_(s, 0.5);
  scale_(sg, 0.5);
  expect_close(s, sg);
  clamp_(s, -0.2, 0.3);
  clamp_(sg, -0.2, 0.3);
  expect_close(s, sg);
}

}  // namespace
}  // namespace crew::kernels
