// Layer bookkeeping: registration, names and order, modes, state_dict and its errors.
#include <gtest/gtest.h>

#include "crew/nn/nn.h"

namespace crew::nn {
namespace {

// A layer with a parameter, a persistable and a non-persistable buffer, and two children.
class Block : public Layer {
 public:
  Block() : Layer("block") {
    scale = register_parameter("scale", Tensor::ones({3}));
    count = register_buffer("count", Tensor::zeros({1}));
    register_buffer("scratch", Tensor::zeros({2}), /*persistable=*/false);
    fc = register_sublayer("fc", std::make_shared<Linear>(3, 2));
    bn = register_sublayer("bn", std::make_shared<BatchNorm2D>(2));
  }
  Tensor forward(const Tensor& x) override { return (*fc)(x); }
  Tensor scale, count;
  std::shared_ptr<Linear> fc;
  std::shared_ptr<BatchNorm2D> bn;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "<no ValueError>";
}

TEST(Layer, NamesAndOrderArePreOrder) {
  Block b;
  EXPECT_EQ(names_of(b.named_parameters()),
            (std::vector<std::string>{"scale", "fc.weight", "fc.bias", "bn.weight", "bn.bias"}));
  EXPECT_EQ(names_of(b.named_buffers()),
            (std::vector<std::string>{"count", "scratch", "bn._mean", "bn._variance"}));
  EXPECT_EQ(b.state_dict().keys(),
            (std::vector<std::string>{"scale", "count", "fc.weight", "fc.bias", "bn.weight", "bn.bias",
                                      "bn._mean", "bn._variance"}));
  EXPECT_EQ(names_of(b.named_parameters("net")).front(), "net.scale");
  EXPECT_EQ(b.parameters(false).size(), 1u);
  EXPECT_EQ(b.children().size(), 2u);
  EXPECT_EQ(b.sublayers().size(), 2u);
  EXPECT_TRUE(b.parameter("scale").is_same(b.scale));
  EXPECT_THROW(b.parameter("nope"), IndexError);
  EXPECT_THROW(b.sublayer("nope"), IndexError);
  for (const Tensor& p : b.parameters()) EXPECT_FALSE(p.stop_gradient());
}

TEST(Layer, StateDictSharesTensors) {
  Block b;
  StateDict sd = b.state_dict();
  EXPECT_TRUE(sd.at("fc.weight").is_same(b.fc->weight()));
  EXPECT_TRUE(sd.at("bn._mean").is_same(b.bn->running_mean()));
}

TEST(Layer, RegistrationErrors) {
  Block b;
  EXPECT_THROW(b.register_parameter("scale", Tensor::ones({1})), ValueError);
  EXPECT_THROW(b.register_buffer("fc", Tensor::ones({1})), ValueError);
  EXPECT_THROW(b.register_parameter("a.b", Tensor::ones({1})), ValueError);
  EXPECT_THROW(b.register_parameter("", Tensor::ones({1})), ValueError);
  EXPECT_THROW(b.register_parameter("u", Tensor()), ValueError);
  EXPECT_THROW(b.register_sublayer("x", std::shared_ptr<Linear>()), ValueError);
  auto outer = std::make_shared<Sequential>();
  auto inner = std::make_shared<Sequential>();
  outer->append(inner);
  EXPECT_THROW(inner->append(outer), ValueError);  // would make a cycle
}

TEST(Layer, SharedParametersAndLayersAppearOnce) {
  auto fc = std::make_shared<Linear>(2, 2);
  Sequential seq(fc, std::make_shared<ReLU>(), fc);
  EXPECT_EQ(names_of(seq.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(seq.sublayers().size(), 2u);
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_TRUE(seq[-1] == fc);
  EXPECT_THROW(seq[3], IndexError);
}

TEST(Layer, TrainEvalIsRecursive) {
  Block b;
  EXPECT_TRUE(b.training());
  b.eval();
  EXPECT_FALSE(b.training());
  EXPECT_FALSE(b.fc->training());
  EXPECT_FALSE(b.bn->training());
  b.train();
  EXPECT_TRUE(b.bn->training());
  int visited = 0;
  b.apply([&](Layer&) { ++visited; });
  EXPECT_EQ(visited, 3);
}

TEST(Layer, FullNamesCountPerScope) {
  Linear a(1, 1), b(1, 1);
  EXPECT_EQ(a.full_name().rfind("linear_", 0), 0u);
  EXPECT_NE(a.full_name(), b.full_name());
}

TEST(Layer, SetStateDictCopiesIntoExistingTensors) {
  seed(1);
  Block a;
  seed(2);
  Block b;
  a.count.fill_(5);
  Tensor w_before = b.fc->weight();
  b.set_state_dict(a.state_dict());
  EXPECT_TRUE(b.fc->weight().is_same(w_before)) << "tensors must be updated in place";
  EXPECT_EQ(b.fc->weight().to_vector<float>(), a.fc->weight().to_vector<float>());
  EXPECT_FALSE(b.fc->weight().shares_storage(a.fc->weight()));
  EXPECT_EQ(b.count.item(), 5.0);
  // Other dtypes are converted.
  StateDict d = a.state_dict();
  d.set("scale", Tensor::full({3}, 2.0, DType::FLOAT64));
  b.set_state_dict(d);
  EXPECT_EQ(b.scale.dtype(), DType::FLOAT32);
  EXPECT_EQ(b.scale.to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(Layer, SetStateDictErrorsNameKeyAndShapes) {
  Block b;
  StateDict good = b.state_dict();
  std::vector<float> before = b.scale.to_vector<float>();

  StateDict missing = good;
  missing.erase("bn._variance");
  EXPECT_NE(error_of([&] { b.set_state_dict(missing); }).find("'bn._variance'"), std::string::npos);

  StateDict unexpected = good;
  unexpected.insert("fc.extra", Tensor::ones({4}));
  EXPECT_NE(error_of([&] { b.set_state_dict(unexpected); }).find("'fc.extra'"), std::string::npos);

  StateDict mismatch = good;
  mismatch.set("scale", Tensor::full({4}, 9.0));
  mismatch.set("fc.weight", Tensor::full({3, 2}, 7.0));
  std::string msg = error_of([&] { b.set_state_dict(mismatch); });
  EXPECT_NE(msg.find("'scale'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
  EXPECT_EQ(b.scale.to_vector<float>(), before);
  EXPECT_NE(b.fc->weight().to_vector<float>()[0], 7.0f) << "a failed load must change nothing";

  // Non-strict: missing and unexpected keys are skipped, shape mismatches still fail.
  StateDict partial;
  partial.insert("scale", Tensor::full({3}, 4.0));
  partial.insert("other", Tensor::ones({1}));
  b.set_state_dict(partial, /*strict=*/false);
  EXPECT_EQ(b.scale.to_vector<float>(), (std::vector<float>{4, 4, 4}));
  EXPECT_THROW(b.set_state_dict(mismatch, false), ValueError);
}

// A wrapper that presents its inner layer's parameters and state without a prefix (the way
// DataParallel does), used through a Layer&.
class Wrapper : public Layer {
 public:
  explicit Wrapper(std::shared_ptr<Layer> inner) : Layer("wrapper"), inner_(std::move(inner)) {}
  Tensor forward(const Tensor& x) override { return inner_->forward(x); }
  std::vector<std::pair<std::string, Tensor>> named_parameters(const std::string& prefix,
                                                               bool include_sublayers) const override {
    return inner_->named_parameters(prefix, include_sublayers);
  }
  std::vector<Tensor> parameters(bool include_sublayers) const override {
    return inner_->parameters(include_sublayers);
  }
  StateDict state_dict() const override { return inner_->state_dict(); }
  void set_state_dict(const StateDict& sd, bool strict) override { inner_->set_state_dict(sd, strict); }
  void train() override {
    Layer::train();
    inner_->train();
  }
  void eval() override {
    Layer::eval();
    inner_->eval();
  }

 private:
  std::shared_ptr<Layer> inner_;
};

TEST(Layer, WrappersOverrideThroughTheBase) {
  auto inner = std::make_shared<Linear>(2, 2);
  Wrapper w(inner);
  Layer& base = w;
  EXPECT_EQ(base.state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(base.parameters().size(), 2u);
  base.eval();
  EXPECT_FALSE(inner->training());
  StateDict sd = inner->state_dict();
  sd.set("bias", Tensor::full({2}, 3.0));
  base.set_state_dict(sd);
  EXPECT_EQ(inner->bias().to_vector<float>(), (std::vector<float>{3, 3}));
  inner->weight().set_grad(Tensor::ones({2, 2}));
  base.clear_gradients();
  EXPECT_EQ(inner->weight().grad().to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(Layer, ClearGradients) {
  Linear fc(2, 3);
  fc.weight().set_grad(Tensor::ones({2, 3}));
  fc.clear_gradients();
  EXPECT_EQ(fc.weight().grad().to_vector<float>(), std::vector<float>(6, 0.0f));
  fc.clear_gradients(false);
  EXPECT_FALSE(fc.weight().grad().defined());
}

}  // namespace
}  // namespace crew::nn
