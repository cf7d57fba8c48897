// cross_entropy over logits [..., C] (a language model's [B, T, V]) against a loop reference.
#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

// -log softmax(logits[r])[label[r]] per row.
std::vector<double> reference_rows(const Tensor& logits, const std::vector<int64_t>& labels) {
  const int64_t c = logits.size(-1);
  const auto x = logits.to_vector<double>();
  std::vector<double> out;
  for (size_t r = 0; r < labels.size(); ++r) {
    double total = 0;
    for (int64_t j = 0; j < c; ++j) total += std::exp(x[r * c + j]);
    out.push_back(labels[r] == -100 ? 0.0 : std::log(total) - x[r * c + labels[r]]);
  }
  return out;
}

TEST(FunctionalCrossEntropyNdTest, BatchTimeVocabMatchesReference) {
  Tensor logits = random_input({2, 3, 5});
  const std::vector<int64_t> lab{0, 4, 2, 1, 3, 3};
  const auto want = reference_rows(logits, lab);
  for (const Shape& ls : {Shape{2, 3}, Shape{2, 3, 1}}) {
    Tensor labels = Tensor::from_vector(lab, ls);
    Tensor none = F::cross_entropy(logits, labels, F::Reduction::NONE);
    ASSERT_EQ(none.shape(), (Shape{2, 3}));
    const auto got = none.to_vector<double>();
    double total = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-12) << i;
      total += want[i];
    }
    EXPECT_NEAR(F::cross_entropy(logits, labels).item(), total / 6, 1e-12);
    EXPECT_NEAR(F::cross_entropy(logits, labels, F::Reduction::SUM).item(), total, 1e-12);
  }
}

TEST(FunctionalCrossEntropyNdTest, MeanSkipsIgnoredPositions) {
  Tensor logits = random_input({2, 2, 3});
  const std::vector<int64_t> lab{1, -100, 2, 0};
  const auto want = reference_rows(logits, lab);
  EXPECT_NEAR(F::cross_entropy(logits, Tensor::from_vector(lab, {2, 2})).item(),
              (want[0] + want[2] + want[3]) / 3, 1e-12);
}

TEST(FunctionalCrossEntropyNdTest, SameAsFlattenedRows) {
  Tensor logits = random_input({2, 3, 4}, DType::FLOAT32, 3);
  Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 3, 0, 1}, {2, 3});
  EXPECT_FLOAT_EQ(F::cross_entropy(logits, labels).item(),
                  F::cross_entropy(logits.view({6, 4}), labels.view({6})).item());
}

TEST(FunctionalCrossEntropyNdTest, GradientsAllReductions) {
  Tensor logits = random_input({2, 3, 4});
  Tensor labels = Tensor::from_vector<int64_t>({0, 3, -100, 1, 2, 2}, {2, 3});
  for (auto r : {F::Reduction::MEAN, F::Reduction::SUM, F::Reduction::NONE}) {
    expect_gradients_match([&](const Inputs& in) { return F::cross_entropy(in[0], labels, r); }, {logits});
  }
}

TEST(FunctionalCrossEntropyNdTest, RejectsMismatchedLabels) {
  Tensor logits = Tensor::zeros({2, 3, 4});
  EXPECT_THROW(F::cross_entropy(logits, Tensor::zeros({2, 4}, DType::INT64)), ValueError);
  EXPECT_THROW(F::cross_entropy(logits, Tensor::zeros({6}, DType::INT64)), ValueError);
  EXPECT_THROW(F::cross_entropy(logits, Tensor::full({2, 3}, 4, DType::INT64)), IndexError);
  EXPECT_THROW(F::cross_entropy(Tensor::zeros({4}), Tensor::zeros({}, DType::INT64)), ValueError);
  try {
    F::cross_entropy(logits, Tensor::zeros({2, 4}, DType::INT64));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3, 1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
