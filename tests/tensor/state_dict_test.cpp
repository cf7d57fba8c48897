#include "crew/tensor/state_dict.h"

#include <gtest/gtest.h>

namespace crew {
namespace {

TEST(StateDict, KeepsInsertionOrder) {
  StateDict sd;
  sd.insert("z", Tensor::ones({2}));
  sd.insert("a", Tensor::zeros({3}));
  sd.insert("m", Tensor::scalar(1.0));
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"z", "a", "m"}));
  std::vector<std::string> seen;
  for (const auto& [k, t] : sd) seen.push_back(k);
  EXPECT_EQ(seen, sd.keys());
  EXPECT_EQ(sd.size(), 3u);
  EXPECT_TRUE(sd.contains("a"));
  EXPECT_FALSE(sd.contains("b"));
  EXPECT_EQ(sd.at("a").shape(), (Shape{3}));
}

TEST(StateDict, SetReplacesInPlaceOrAppends) {
  StateDict sd;
  sd.insert("x", Tensor::ones({1}));
  sd.insert("y", Tensor::ones({1}));
  sd.set("x", Tensor::zeros({4}));
  sd.set("w", Tensor::zeros({5}));
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"x", "y", "w"}));
  EXPECT_EQ(sd.at("x").shape(), (Shape{4}));
}

TEST(StateDict, EraseKeepsIndexConsistent) {
  StateDict sd;
  sd.insert("a", Tensor::full({1}, 1));
  sd.insert("b", Tensor::full({1}, 2));
  sd.insert("c", Tensor::full({1}, 3));
  EXPECT_TRUE(sd.erase("a"));
  EXPECT_FALSE(sd.erase("a"));
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(sd.at("c").item(), 3.0);
  sd.set("b", Tensor::full({1}, 7));
  EXPECT_EQ(sd.at("b").item(), 7.0);
}

TEST(StateDict, ErrorsNameTheKey) {
  StateDict sd;
  sd.insert("conv1.weight", Tensor::ones({1}));
  try {
    sd.at("conv1.bias");
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("conv1.bias"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sd.insert("conv1.weight", Tensor::ones({1})), ValueError);
  EXPECT_THROW(sd.insert("undefined", Tensor()), ValueError);
}

}  // namespace
}  // namespace crew
