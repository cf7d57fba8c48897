// nn's functions on the fake device (tests/testing/fake_device.h), whose memory host code may
// not touch: each op's forward through nn::functional and its backward kernel entry points
// give, bit for bit, what they give on the CPU. So nothing above crew/tensor/kernels reads or
// writes elements itself in these ops (the pointer guard would throw).
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/nn/functional_rnn.h"
#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/adaptive_pool.h"
#include "crew/tensor/kernels/attention.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/batch_norm_loops.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/cross_entropy.h"
#include "crew/tensor/kernels/dropout.h"
#include "crew/tensor/kernels/embedding.h"
#include "crew/tensor/kernels/layer_norm.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "crew/tensor/random.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"

namespace crew {
namespace {

namespace F = nn::functional;

class FakeDeviceNn : public ::testing::Test {
 protected:
  Tensor fake(const Tensor& t) const { return t.defined() ? t.to(device_.place()) : t; }

  // got is on the fake device and equals want (on the CPU) bit for bit.
  void expect_same(const Tensor& want, const Tensor& got, const char* what) const {
    ASSERT_EQ(want.defined(), got.defined()) << what;
    if (!want.defined()) return;
    EXPECT_EQ(got.place(), device_.place()) << what;
    EXPECT_EQ(got.shape(), want.shape()) << what;
    EXPECT_EQ(got.dtype(), want.dtype()) << what;
    EXPECT_EQ(got.cpu().to_vector<double>(), want.to_vector<double>()) << what;
  }

  // Runs op on CPU inputs and on their fake-device copies and compares the results.
  void expect_same_op(const char* what, const std::vector<Tensor>& inputs,
                      const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& op) const {
    const std::vector<Tensor> want = op(inputs);
    std::vector<Tensor> on_fake;
    for (const Tensor& t : inputs) on_fake.push_back(fake(t));
    const int before = testing::fake_entry_calls();
    const std::vector<Tensor> got = op(on_fake);
    EXPECT_GT(testing::fake_entry_calls(), before) << what << ": no fake kernel entry ran";
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) expect_same(want[i], got[i], what);
  }

  Tensor rand(const Shape& shape, DType dtype = DType::FLOAT32) {
    return uniform(shape, -1.0, 1.0, dtype, &gen_);
  }

  testing::FakeDevice device_;
  testing::FakeKernels kernels_;
  Generator gen_{17};
};

TEST_F(FakeDeviceNn, Activations) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({3, 5, 4}, dt), g = rand({3, 5, 4}, dt);
    expect_same_op("activations", {x, g}, [](const std::vector<Tensor>& in) {
      std::vector<Tensor> out = {F::relu(in[0]), F::sigmoid(in[0]), F::tanh(in[0]), F::gelu(in[0]),
                                 F::gelu(in[0], true)};
      using kernels::Activation;
      for (Activation kind : {Activation::RELU, Activation::SIGMOID, Activation::TANH, Activation::GELU_ERF,
                              Activation::GELU_TANH}) {
        const Tensor y = kernels::activation_forward(kind, in[0]);
        out.push_back(kernels::activation_backward(kind, in[1], in[0], y));
      }
      return out;
    });
  }
}

TEST_F(FakeDeviceNn, SoftmaxAlongEachAxis) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({2, 3, 4}, dt), g = rand({2, 3, 4}, dt);
    expect_same_op("softmax", {x, g}, [](const std::vector<Tensor>& in) {
      std::vector<Tensor> out;
      for (int64_t axis : {0, 1, 2}) {
        for (bool log_out : {false, true}) {
          const Tensor y = log_out ? F::log_softmax(in[0], axis) : F::softmax(in[0], axis);
          out.push_back(y);
          out.push_back(kernels::softmax_backward(in[1], y, axis, log_out));
        }
      }
      Tensor rows = in[0].clone();
      kernels::softmax_rows_(rows);
      out.push_back(rows);
      out.push_back(kernels::softmax_rows_backward(rows, in[1]));
      return out;
    });
  }
}

TEST_F(FakeDeviceNn, ConvolutionAndPooling) {
  const Tensor x = rand({2, 3, 8, 8}), w = rand({4, 3, 3, 3}), b = rand({4});
  expect_same_op("conv2d and pools", {x, w, b}, [](const std::vector<Tensor>& in) {
    const Tensor y = F::conv2d(in[0], in[1], in[2], {1, 1}, {1, 1});
    const Tensor gy = F::tanh(y);  // a gradient of y's shape, computed on y's place
    kernels::Conv2dGrads gr = kernels::conv2d_backward(gy, in[0], in[1], in[0].shape(), {{1, 1}, {1, 1}});
    std::vector<Tensor> out = {y, gr.grad_x, gr.grad_weight, gr.grad_bias};
    out.push_back(F::max_pool2d(in[0], {2, 2}));
    out.push_back(F::avg_pool2d(in[0], {3, 3}, {2, 2}, {1, 1}));
    for (kernels::PoolKind kind : {kernels::PoolKind::MAX, kernels::PoolKind::AVG}) {
      const kernels::Pool2dParams p{{2, 2}, {2, 2}, {0, 0}};
      kernels::PoolForwardResult r = kernels::pool2d_forward(kind, in[0], p, true);
      out.push_back(r.y);
      out.push_back(kernels::pool2d_backward(kind, F::tanh(r.y), in[0].shape(), r.workspace, p));
    }
    return out;
  });
}

TEST_F(FakeDeviceNn, AdaptiveAveragePooling) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({2, 3, 7, 5}, dt), g = rand({2, 3, 3, 2}, dt);
    expect_same_op("adaptive_avg_pool2d", {x, g}, [](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{F::adaptive_avg_pool2d(in[0], {3, 2}), F::adaptive_avg_pool2d(in[0], {1, 1}),
                                 kernels::adaptive_avg_pool2d_backward(in[1], in[0].shape())};
    });
  }
}

TEST_F(FakeDeviceNn, LayerNorm) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({4, 6}, dt), w = rand({6}, dt), b = rand({6}, dt), g = rand({4, 6}, dt);
    expect_same_op("layer_norm", {x, w, b, g}, [](const std::vector<Tensor>& in) {
      kernels::LayerNormStats stats;
      const Tensor y = kernels::layer_norm_forward(in[0], 4, 6, in[1], in[2], 1e-5, stats);
      kernels::LayerNormGrads gr =
          kernels::layer_norm_backward(in[3], in[0], 4, 6, in[1], in[2], 1e-5, stats);
      return std::vector<Tensor>{
          F::layer_norm(in[0], {6}, in[1], in[2]), y, stats.mean, stats.variance, gr.x, gr.weight, gr.bias};
    });
  }
}

TEST_F(FakeDeviceNn, BatchNormOnOneDnnAndOnTheLoops) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor x = rand({4, 3, 5, 5}, dt), w = rand({3}, dt), b = rand({3}, dt), g = rand({4, 3, 5, 5}, dt);
    const Tensor rm = Tensor::zeros({3}, dt), rv = Tensor::ones({3}, dt);
    expect_same_op("batch_norm", {x, w, b, g, rm, rv}, [](const std::vector<Tensor>& in) {
      Tensor rm = in[4].clone(), rv = in[5].clone();
      std::vector<Tensor> out;
      for (bool training : {true, false}) {
        out.push_back(F::batch_norm(in[0], rm, rv, in[1], in[2], training, 0.9, 1e-5));
        out.push_back(rm.clone());
        out.push_back(rv.clone());
      }
      // The loops' backward entry points (the autograd node of the loop path calls these).
      const Tensor mean = kernels::batch_norm_channel_sums(in[0]);
      const Tensor sq = kernels::batch_norm_channel_sq_dev(in[0], mean);
      auto [sum_g, sum_gx] = kernels::batch_norm_grad_sums(in[3], in[0], mean, sq);
      out.insert(out.end(),
                 {mean, sq, sum_g, sum_gx,
                  kernels::batch_norm_input_grad(in[3], in[0], mean, sq, sq, sum_g, sum_gx, 10.0, true),
                  kernels::batch_norm_input_grad(in[3], in[0], mean, sq, sq, sum_g, sum_gx, 10.0, false)});
      if (kernels::batch_norm_supported(in[0])) {
        kernels::BatchNormStats stats;
        const Tensor y = kernels::batch_norm_forward(in[0], in[1], in[2], 1e-5, stats);
        kernels::BatchNormGrads gr = kernels::batch_norm_backward(in[3], in[0], in[1], in[2], 1e-5, stats);
        out.insert(out.end(), {y, stats.mean, stats.variance, gr.x, gr.weight, gr.bias});
      }
      return out;
    });
  }
}

TEST_F(FakeDeviceNn, CrossEntropy) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    const Tensor logits = rand({5, 7}, dt);
    const Tensor labels = Tensor::from_vector<int64_t>({3, -100, 0, 6, 2}, {5});
    const Tensor g = rand({5}, dt);
    expect_same_op("cross_entropy", {logits, labels, g}, [](const std::vector<Tensor>& in) {
      std::vector<Tensor> out = {F::cross_entropy(in[0], in[1]),
                                 F::cross_entropy(in[0], in[1], nn::functional::Reduction::SUM),
                                 F::cross_entropy(in[0], in[1], nn::functional::Reduction::NONE)};
      auto [per_row, probs, counted] = kernels::cross_entropy_forward(in[0], in[1]);
      EXPECT_EQ(counted, 4);
      out.insert(out.end(), {per_row, probs, kernels::cross_entropy_backward(probs, in[1], in[2], 1.0, true),
                             kernels::cross_entropy_backward(
                                 probs, in[1], F::tanh(in[2].slice(0, 1).view({})), 0.25, false)});
      return out;
    });
  }
}

TEST_F(FakeDeviceNn, Accuracy) {
  const Tensor logits = rand({6, 5});
  const Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 3, 4, -100}, {6});
  for (int64_t k : {1, 2, 5}) {
    EXPECT_EQ(F::accuracy(fake(logits), fake(labels), k).item(), F::accuracy(logits, labels, k).item()) << k;
  }
}

TEST_F(FakeDeviceNn, Embedding) {
  const Tensor w = rand({6, 4});
  const Tensor ids = Tensor::from_vector<int64_t>({1, 5, 0, 1, 2, 1}, {2, 3});
  const Tensor g = rand({2, 3, 4});
  expect_same_op("embedding", {w, ids, g}, [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{F::embedding(in[1], in[0]), F::embedding(in[1], in[0], 1),
                               kernels::embedding_backward(in[2], in[1], 6, -1),
                               kernels::embedding_backward(in[2], in[1], 6, 1)};
  });
}

// The mask only: dropout multiplies by it with kernels::binary, which autograd's kernels own.
TEST_F(FakeDeviceNn, DropoutDrawsTheSameMask) {
  const Tensor x = rand({40, 30});
  expect_same_op("dropout_mask", {x}, [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{kernels::dropout_mask(in[0], 0.3, 1234), kernels::dropout_mask(in[0], 1.0, 5)};
  });
}

TEST_F(FakeDeviceNn, Attention) {
  const Tensor q = rand({2, 5, 2, 4}), k = rand({2, 5, 2, 4}), v = rand({2, 5, 2, 4}), g = rand({2, 5, 2, 4});
  const Tensor qkv = rand({2, 5, 24}), gp = rand({2, 5, 8});
  const Tensor s64 = rand({2, 2, 5, 5}, DType::FLOAT64);
  expect_same_op("attention", {q, k, v, g, qkv, gp, s64}, [](const std::vector<Tensor>& in) {
    std::vector<Tensor> out;
    for (bool causal : {false, true}) {
      out.push_back(F::scaled_dot_product_attention(in[0], in[1], in[2], causal));
      out.push_back(F::packed_qkv_attention(in[4], 2, causal));
      auto [y, p] = kernels::attention_forward(in[0], in[1], in[2], 0, 0.5, causal);
      for (const Tensor& t :
           kernels::attention_backward(in[0], in[1], in[2], p, in[3], 0, 0.5, causal, {true, false, true})) {
        out.push_back(t);
      }
      auto [yp, pp] = kernels::attention_forward(in[4], in[4], in[4], 2, 0.5, causal);
      out.insert(out.end(), {y, p, yp, pp});
      out.push_back(
          kernels::attention_backward(in[4], in[4], in[4], pp, in[5], 2, 0.5, causal, {true, true, true})[0]);
      Tensor scores = in[6].clone();
      kernels::attention_mask_softmax_(scores, causal);
      out.push_back(scores);
    }
    return out;
  });
}

TEST_F(FakeDeviceNn, Rnn) {
  // A bidirectional LSTM layer (I = H = 3): rnn_layer's forward with its graph node and the
  // engine's backward through it (both kernel entries).
  std::vector<Tensor> inputs{rand({4, 2, 3}), rand({2, 2, 3}), rand({2, 2, 3}), rand({4, 2, 6})};
  for (int i = 0; i < 8; ++i) inputs.push_back(rand(i % 4 < 2 ? Shape{12, 3} : Shape{12}));
  expect_same_op("rnn", inputs, [](const std::vector<Tensor>& in) {
    std::vector<Tensor> w(in.begin() + 4, in.end());
    for (Tensor& t : w) t = t.detach().set_stop_gradient(false);
    Tensor x = in[0].detach().set_stop_gradient(false);
    auto o = F::rnn_layer(x, w, in[1], in[2], kernels::RnnCell::LSTM, true);
    crew::add(crew::sum(crew::mul(o.y, in[3])), crew::sum(o.c_n)).backward();
    std::vector<Tensor> out{o.y, o.h_n, o.c_n, x.grad()};
    for (const Tensor& t : w) out.push_back(t.grad());
    return out;
  });
}

TEST_F(FakeDeviceNn, HostCodeAboveTheKernelsWouldBeCaught) {
  // The guard these tests rely on: host code reading fake memory throws.
  EXPECT_THROW(fake(rand({2})).data<float>(), DeviceError);
}

}  // namespace
}  // namespace crew
