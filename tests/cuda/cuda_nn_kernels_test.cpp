// The CUDA entries of nn_ops.cpp (ResNet-18's and the GPT's kernels) against the CPU entries of
// the same kernels on random inputs: batch norm (loops and fused), layer norm, embedding,
// dropout, adaptive pooling, attention (plain and packed, causal or not), permute/slice/concat.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "crew/core/error.h"
#include "crew/tensor/kernels/adaptive_pool.h"
#include "crew/tensor/kernels/attention.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/batch_norm_loops.h"
#include "crew/tensor/kernels/copy_strided.h"
#include "crew/tensor/kernels/dropout.h"
#include "crew/tensor/kernels/embedding.h"
#include "crew/tensor/kernels/layer_norm.h"
#include "crew/tensor/random.h"

namespace crew::kernels {
namespace {

const Place kGpu{DeviceType::GPU, 0};

Tensor rand(const Shape& s, double lo = -1, double hi = 1) { return uniform(s, lo, hi); }
Tensor gpu(const Tensor& t) { return t.defined() ? t.to(kGpu) : t; }

// |gpu - cpu| <= tol * (1 + |cpu|) everywhere, NaN never passing (any floating dtype).
void expect_close(const Tensor& cpu, const Tensor& on_gpu, double tol = 1e-5) {
  ASSERT_EQ(cpu.defined(), on_gpu.defined());
  if (!cpu.defined()) return;
  ASSERT_EQ(on_gpu.place(), kGpu);
  ASSERT_EQ(cpu.shape(), on_gpu.shape());
  const std::vector<double> a = cpu.to(DType::FLOAT64).to_vector<double>();
  const std::vector<double> b = on_gpu.cpu().to(DType::FLOAT64).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(b[i])) << "element " << i;
    ASSERT_LE(std::abs(a[i] - b[i]), tol * (1 + std::abs(a[i])))
        << "element " << i << ": cpu " << a[i] << " gpu " << b[i];
  }
}

TEST(CudaNnKernels, BatchNormLoopsAndFused) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({4, 3, 5, 6}).to(dt), g = rand({4, 3, 5, 6}).to(dt);
    const Tensor sums = batch_norm_channel_sums(x);
    expect_close(sums, batch_norm_channel_sums(gpu(x)), 1e-9);
    const Tensor mean = Tensor::from_vector(std::vector<double>{0.1, -0.2, 0.3});
    const Tensor invstd = Tensor::from_vector(std::vector<double>{1.5, 0.7, 2.0});
    const Tensor scale = Tensor::from_vector(std::vector<double>{0.9, 1.1, -0.5});
    const Tensor bias = rand({3}).to(dt);
    expect_close(batch_norm_channel_sq_dev(x, mean), batch_norm_channel_sq_dev(gpu(x), gpu(mean)), 1e-9);
    expect_close(batch_norm_normalize(x, mean, invstd, scale, bias),
                 batch_norm_normalize(gpu(x), gpu(mean), gpu(invstd), gpu(scale), gpu(bias)));
    auto [sg, sgx] = batch_norm_grad_sums(g, x, mean, invstd);
    auto [sg2, sgx2] = batch_norm_grad_sums(gpu(g), gpu(x), gpu(mean), gpu(invstd));
    expect_close(sg, sg2, 1e-9);
    expect_close(sgx, sgx2, 1e-9);
    for (bool training : {true, false}) {
      expect_close(batch_norm_input_grad(g, x, mean, invstd, scale, sg, sgx, 120, training),
                   batch_norm_input_grad(gpu(g), gpu(x), gpu(mean), gpu(invstd), gpu(scale), gpu(sg),
                                         gpu(sgx), 120, training));
    }
    Tensor rm = rand({3}).to(dt), rv = rand({3}, 0.5, 1).to(dt);
    Tensor rm2 = gpu(rm), rv2 = gpu(rv);
    batch_norm_update_running(rm, rv, mean, invstd, 0.9);
    batch_norm_update_running(rm2, rv2, gpu(mean), gpu(invstd), 0.9);
    expect_close(rm, rm2);
    expect_close(rv, rv2);
  }
  // The fused training forward/backward (oneDNN on the CPU).
  const Tensor x = rand({8, 4, 7, 7}), w = rand({4}), b = rand({4}), g = rand({8, 4, 7, 7});
  BatchNormStats s1, s2;
  expect_close(batch_norm_forward(x, w, b, 1e-5, s1), batch_norm_forward(gpu(x), gpu(w), gpu(b), 1e-5, s2),
               1e-4);
  expect_close(s1.mean, s2.mean);
  expect_close(s1.variance, s2.variance, 1e-4);
  const BatchNormGrads g1 = batch_norm_backward(g, x, w, b, 1e-5, s1);
  const BatchNormGrads g2 = batch_norm_backward(gpu(g), gpu(x), gpu(w), gpu(b), 1e-5, s2);
  expect_close(g1.x, g2.x, 1e-4);
  expect_close(g1.weight, g2.weight, 1e-4);
  expect_close(g1.bias, g2.bias, 1e-4);
}

TEST(CudaNnKernels, LayerNorm) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({6, 33}).to(dt), w = rand({33}).to(dt), b = rand({33}).to(dt),
                 g = rand({6, 33}).to(dt);
    LayerNormStats s1, s2;
    expect_close(layer_norm_forward(x, 6, 33, w, b, 1e-5, s1),
                 layer_norm_forward(gpu(x), 6, 33, gpu(w), gpu(b), 1e-5, s2), 1e-4);
    const LayerNormGrads g1 = layer_norm_backward(g, x, 6, 33, w, b, 1e-5, s1);
    const LayerNormGrads g2 = layer_norm_backward(gpu(g), gpu(x), 6, 33, gpu(w), gpu(b), 1e-5, s2);
    expect_close(g1.x, g2.x, 1e-4);
    expect_close(g1.weight, g2.weight, 1e-4);
    expect_close(g1.bias, g2.bias, 1e-4);
  }
}

TEST(CudaNnKernels, EmbeddingForwardBackwardAndABadId) {
  const Tensor w = rand({11, 5});
  const Tensor ids = Tensor::from_vector<int64_t>({3, 0, 10, 3, 7, 2}, {2, 3});
  expect_close(embedding_forward(ids, w, 7), embedding_forward(gpu(ids), gpu(w), 7), 0);
  expect_close(embedding_forward(ids.to(DType::INT32), w, -1),
               embedding_forward(gpu(ids.to(DType::INT32)), gpu(w), -1), 0);
  const Tensor g = rand({2, 3, 5});
  expect_close(embedding_backward(g, ids, 11, 7), embedding_backward(gpu(g), gpu(ids), 11, 7));
  const Tensor bad = Tensor::from_vector<int64_t>({1, 11, 2});
  EXPECT_THROW(embedding_forward(gpu(bad), gpu(w), -1), IndexError);
}

TEST(CudaNnKernels, DropoutMaskIsTheCpusBitForBit) {
  const Tensor x = rand({1000});
  for (double p : {0.1, 0.5, 1.0}) expect_close(dropout_mask(x, p, 42), dropout_mask(gpu(x), p, 42), 0);
}

TEST(CudaNnKernels, AdaptiveAvgPool) {
  const Tensor x = rand({2, 3, 7, 9});
  for (auto [oh, ow] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {7, 9}}) {
    const Tensor y = adaptive_avg_pool2d_forward(x, oh, ow);
    expect_close(y, adaptive_avg_pool2d_forward(gpu(x), oh, ow));
    const Tensor g = rand(y.shape());
    expect_close(adaptive_avg_pool2d_backward(g, x.shape()), adaptive_avg_pool2d_backward(gpu(g), x.shape()));
  }
}

TEST(CudaNnKernels, AttentionPlainAndPacked) {
  for (bool causal : {false, true}) {
    const Tensor q = rand({2, 7, 3, 4}), k = rand({2, 7, 3, 4}), v = rand({2, 7, 3, 4}),
                 g = rand({2, 7, 3, 4});
    auto [y1, p1] = attention_forward(q, k, v, 0, 0.5, causal);
    auto [y2, p2] = attention_forward(gpu(q), gpu(k), gpu(v), 0, 0.5, causal);
    expect_close(y1, y2, 1e-4);
    expect_close(p1, p2, 1e-4);
    const auto d1 = attention_backward(q, k, v, p1, g, 0, 0.5, causal, {true, true, true});
    const auto d2 =
        attention_backward(gpu(q), gpu(k), gpu(v), p2, gpu(g), 0, 0.5, causal, {true, true, true});
    for (int i = 0; i < 3; ++i) expect_close(d1[i], d2[i], 1e-4);
    const Tensor qkv = rand({2, 7, 36}), gp = rand({2, 7, 12});
    auto [py1, pp1] = attention_forward(qkv, qkv, qkv, 3, 0.5, causal);
    auto [py2, pp2] = attention_forward(gpu(qkv), gpu(qkv), gpu(qkv), 3, 0.5, causal);
    expect_close(py1, py2, 1e-4);
    expect_close(attention_backward(qkv, qkv, qkv, pp1, gp, 3, 0.5, causal, {true})[0],
                 attention_backward(gpu(qkv), gpu(qkv), gpu(qkv), pp2, gpu(gp), 3, 0.5, causal, {true})[0],
                 1e-4);
  }
  Tensor s = rand({2, 3, 5, 5});
  Tensor s2 = gpu(s);
  attention_mask_softmax_(s, true);
  attention_mask_softmax_(s2, true);
  expect_close(s, s2, 1e-5);
}

TEST(CudaNnKernels, PermuteSliceConcat) {
  for (DType dt : {DType::FLOAT32, DType::INT64, DType::UINT8}) {
    const Tensor x = rand({3, 4, 5}, 0, 100).to(dt);
    expect_close(permute(x, {2, 0, 1}), permute(gpu(x), {2, 0, 1}), 0);
    expect_close(slice_axis(x, 1, 1, 3), slice_axis(gpu(x), 1, 1, 3), 0);
    const Tensor g = rand({3, 2, 5}, 0, 100).to(dt);
    expect_close(slice_scatter(g, {3, 4, 5}, 1, 2), slice_scatter(gpu(g), {3, 4, 5}, 1, 2), 0);
    const Tensor a = rand({3, 1, 5}, 0, 100).to(dt);
    expect_close(concat({x, a}, 1, {3, 5, 5}), concat({gpu(x), gpu(a)}, 1, {3, 5, 5}), 0);
  }
}

}  // namespace
}  // namespace crew::kernels
