// cross_entropy (fused log-softmax + NLL over the last axis, crew/tensor/kernels/cross_entropy),
// mse_loss, accuracy (crew/tensor/kernels/accuracy).
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/accuracy.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/cross_entropy.h"

namespace crew::nn::functional {
namespace {

// Checks that labels (int64) are of shape `rows` ([N] for [N, K] logits) or rows + [1].
void check_labels(const Tensor& labels, const Shape& rows, const char* op) {
  CREW_CHECK(labels.dtype() == DType::INT64, op, ": labels must be int64, got ", dtype_name(labels.dtype()));
  Shape with_one = rows;
  with_one.push_back(1);
  CREW_CHECK(labels.shape() == rows || labels.shape() == with_one, op, ": labels of shape ",
             shape_str(labels.shape()), " do not match the logits' rows (expected ", shape_str(rows), " or ",
             shape_str(with_one), ")");
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction reduction) {
  if (auto in = amp::autocast_operands("cross_entropy", logits)) {
    return cross_entropy((*in)[0], labels, reduction);
  }
  kernels::check_floating(logits, "cross_entropy");
  CREW_CHECK(logits.dim() >= 2, "cross_entropy: logits must be [N, K] or [..., K], got shape ",
             shape_str(logits.shape()));
  check_labels(labels, Shape(logits.shape().begin(), logits.shape().end() - 1), "cross_entropy");
  Tensor per_row, probs;
  int64_t counted = 0;
  std::tie(per_row, probs, counted) = kernels::cross_entropy_forward(logits, labels);
  Tensor y = per_row;
  double scale = 1.0;  // d y / d per_row[i] for MEAN and SUM
  if (reduction != Reduction::NONE) {
    double total = 0;
    for (double v : per_row.to_vector<double>()) total += v;
    if (reduction == Reduction::MEAN) scale = counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0;
    y = Tensor::full({}, total * scale, logits.dtype(), logits.place());
  }
  if (autograd::should_record({&logits})) {
    autograd::record(
        y, "cross_entropy", {logits},
        [probs, labels = labels.detach(), scale, reduction](const Tensor& g, const std::vector<bool>&) {
          return std::vector<Tensor>{
              kernels::cross_entropy_backward(probs, labels, g, scale, reduction == Reduction::NONE)};
        });
  }
  return y;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (auto in = amp::autocast_operands("mse_loss", input, target)) {
    return mse_loss((*in)[0], (*in)[1], reduction);
  }
  Tensor d = sub(input, target);
  Tensor sq = mul(d, d);
  switch (reduction) {
    case Reduction::MEAN:
      return mean(sq);
    case Reduction::SUM:
      return sum(sq);
    case Reduction::NONE:
      return sq;
  }
  return sq;
}

Tensor accuracy(const Tensor& logits, const Tensor& labels, int64_t k) {
  CREW_CHECK(logits.dim() == 2, "accuracy: logits must be [N, K], got shape ", shape_str(logits.shape()));
  const int64_t n = logits.size(0), classes = logits.size(1);
  CREW_CHECK(k >= 1 && k <= classes, "accuracy: k = ", k, " must be in [1, ", classes, "]");
  CREW_CHECK(n > 0, "accuracy: no rows");
  check_labels(labels, {n}, "accuracy");
  const int64_t correct = kernels::accuracy_count(logits, labels, k);
  return Tensor::scalar(static_cast<double>(correct) / static_cast<double>(n));
}

}  // namespace crew::nn::functional
