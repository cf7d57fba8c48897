// In-place changes of tensors saved for backward are detected (issue 29): backward raises a
// StateError naming the op instead of computing a gradient from the changed values.
#include <gtest/gtest.h>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"

namespace crew {
namespace {

Tensor param(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s).set_stop_gradient(false); }

void expect_modified_error(const Tensor& loss, const char* op) {
  try {
    loss.backward();
    FAIL() << "backward ran on data changed in place";
  } catch (const StateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::string("backward of '") + op + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("modified by an inplace operation"), std::string::npos) << what;
    EXPECT_NE(what.find("version is 1 but the expected version is 0"), std::string::npos) << what;
  }
}

TEST(SavedVersion, FillOfASavedInputRaisesNamingTheOp) {
  Tensor x = param({1, 2}, {2});
  Tensor loss = sum(mul(x, x));  // mul saves x; the gradient would be 2x
  x.fill_(10);
  expect_modified_error(loss, "mul");
}

TEST(SavedVersion, ChangesThroughAViewAndCopyAreSeen) {
  Tensor x = param({1, 2, 3, 4}, {4});
  Tensor loss = sum(log(x));
  x.view({2, 2}).select(1).copy_(Tensor::from_vector<float>({7, 8}, {2}));  // same storage
  expect_modified_error(loss, "log");
}

TEST(SavedVersion, ChangingTheSavedOutputIsSeen) {
  Tensor x = param({0.5f, 1.0f}, {2});
  Tensor y = exp(x);  // exp's backward reads y
  Tensor loss = sum(y);
  y.detach().zero_();
  expect_modified_error(loss, "exp");
}

TEST(SavedVersion, ChangesOfTensorsNoBackwardReadsAreAllowed) {
  Tensor a = param({1, 2}, {2});
  Tensor b = Tensor::from_vector<float>({3, 4}, {2});
  Tensor loss = sum(add(a, b));  // add saves neither input
  b.fill_(100);
  a.fill_(100);
  loss.backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(SavedVersion, ChangesBeforeTheOpAndAfterBackwardAreAllowed) {
  Tensor x = param({1, 2}, {2});
  x.fill_(3);  // before the op: the op saves version 1
  Tensor loss = sum(mul(x, x));
  loss.backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 6}));
  x.fill_(4);  // after backward released the graph
  EXPECT_EQ(x.impl()->storage->saved_for_backward(), 0);
}

TEST(SavedVersion, RetainedGraphAfterAnInPlaceChangeRaisesOnTheSecondBackward) {
  Tensor x = param({1, 2}, {2});
  Tensor loss = sum(mul(x, x));
  loss.backward(Tensor::ones({}), /*retain_graph=*/true);
  EXPECT_EQ(x.impl()->storage->saved_for_backward(), 2);  // a and b of mul(x, x)
  x.bump_version();  // what an optimizer step does
  expect_modified_error(loss, "mul");
}

}  // namespace
}  // namespace crew
