// The seed's CNN: names, shapes for both input sizes, and a checkpoint round trip.
#include <gtest/gtest.h>

#include "crew/nn/nn.h"
#include "crew/tensor/safetensors.h"
#include "tests/testing/temp_dir.h"

namespace crew::nn::models {
namespace {

TEST(MyNet, StateDictKeysAndShapes) {
  MyNet net;
  StateDict sd = net.state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                                                 "conv3.weight", "conv3.bias", "linear1.weight",
                                                 "linear1.bias", "linear2.weight", "linear2.bias"}));
  EXPECT_EQ(sd.at("conv1.weight").shape(), (Shape{32, 1, 3, 3}));
  EXPECT_EQ(sd.at("conv2.weight").shape(), (Shape{64, 32, 3, 3}));
  EXPECT_EQ(sd.at("conv3.weight").shape(), (Shape{64, 64, 3, 3}));
  EXPECT_EQ(sd.at("linear1.weight").shape(), (Shape{576, 64}));
  EXPECT_EQ(sd.at("linear2.weight").shape(), (Shape{64, 10}));
  std::vector<std::string> children;
  for (const auto& [name, layer] : net.named_children()) children.push_back(name);
  EXPECT_EQ(children, (std::vector<std::string>{"conv1", "pool1", "conv2", "pool2", "conv3", "flatten",
                                                "linear1", "linear2"}));
  EXPECT_EQ(MyNet::flat_features(28), 576);
  EXPECT_EQ(MyNet::flat_features(32), 1024);
  EXPECT_THROW(MyNet(10, 1, 12), ValueError);
}

TEST(MyNet, ForwardShapesForBothInputSizes) {
  MyNet gray(10, 1, 28);
  EXPECT_EQ(gray(uniform({4, 1, 28, 28}, 0, 1)).shape(), (Shape{4, 10}));
  MyNet color(7, 3, 32);
  EXPECT_EQ(color.state_dict().at("linear1.weight").shape(), (Shape{1024, 64}));
  EXPECT_EQ(color(uniform({2, 3, 32, 32}, 0, 1)).shape(), (Shape{2, 7}));
  EXPECT_THROW(gray(uniform({4, 3, 32, 32}, 0, 1)), ValueError);
}

TEST(MyNet, CheckpointRoundTripGivesIdenticalOutputs) {
  testing::TempDir dir;
  std::string path = dir.file("my_net.safetensors");
  seed(11);
  MyNet a;
  Tensor x = uniform({3, 1, 28, 28}, 0, 1);
  save(a.state_dict(), path, {{"epoch", "1"}});
  seed(12);
  MyNet b;
  EXPECT_NE(a(x).to_vector<float>(), b(x).to_vector<float>());
  b.set_state_dict(load(path));
  EXPECT_EQ(a(x).to_vector<float>(), b(x).to_vector<float>());
}

}  // namespace
}  // namespace crew::nn::models
