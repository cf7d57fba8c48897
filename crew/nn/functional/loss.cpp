// cross_entropy (fused log-softmax + NLL over the last axis), mse_loss, accuracy.
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::nn::functional {
namespace {

// Paddle's default ignore_index: rows with this label add no loss and no gradient.
constexpr int64_t kIgnoreIndex = -100;

// labels int64 of shape `rows` ([N] for [N, K] logits) or rows + [1] -> their values, checked
// against the class count.
std::vector<int64_t> read_labels(const Tensor& labels, const Shape& rows, int64_t k, const char* op) {
  CREW_CHECK(labels.dtype() == DType::INT64, op, ": labels must be int64, got ", dtype_name(labels.dtype()));
  Shape with_one = rows;
  with_one.push_back(1);
  CREW_CHECK(labels.shape() == rows || labels.shape() == with_one, op, ": labels of shape ",
             shape_str(labels.shape()), " do not match the logits' rows (expected ", shape_str(rows), " or ",
             shape_str(with_one), ")");
  const int64_t n = shape_numel(rows);
  const int64_t* lp = labels.data<int64_t>();
  std::vector<int64_t> out(lp, lp + n);
  for (int64_t i = 0; i < n; ++i) {
    CREW_CHECK_T(IndexError, out[i] == kIgnoreIndex || (out[i] >= 0 && out[i] < k), op, ": label ", out[i],
                 " at row ", i, " is outside [0, ", k, ")");
  }
  return out;
}

// One row: probs = softmax(row), loss = -log_softmax(row)[label] (0 for an ignored label).
template <typename T>
void cross_entropy_row(const T* row, int64_t label, int64_t k, T* loss, T* probs) {
  T mx = row[0];
  for (int64_t j = 1; j < k; ++j) mx = std::max(mx, row[j]);
  T total = 0;
  for (int64_t j = 0; j < k; ++j) total += probs[j] = std::exp(row[j] - mx);
  const T log_total = std::log(total), inv_total = T(1) / total;
  for (int64_t j = 0; j < k; ++j) probs[j] *= inv_total;
  *loss = label == kIgnoreIndex ? T(0) : -(row[label] - mx - log_total);
}

template <typename T>
void cross_entropy_rows(const T* x, const std::vector<int64_t>& labels, int64_t k, T* loss, T* probs) {
  crew::detail::parallel_for(static_cast<int64_t>(labels.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) cross_entropy_row(x + i * k, labels[i], k, loss + i, probs + i * k);
  });
}

// d/dlogits = g_row * (softmax - onehot(label)), in place over probs (this node's own copy).
template <typename T>
void cross_entropy_grad(T* probs, const std::vector<int64_t>& lab, int64_t k, const T* go, double scale,
                        bool per_row) {
  crew::detail::parallel_for(static_cast<int64_t>(lab.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* row = probs + i * k;
      if (lab[i] == kIgnoreIndex) {
        std::fill(row, row + k, T(0));
        continue;
      }
      const T gi = per_row ? go[i] : static_cast<T>(go[0] * scale);
      row[lab[i]] -= 1;
      for (int64_t j = 0; j < k; ++j) row[j] *= gi;
    }
  });
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction reduction) {
  kernels::check_floating(logits, "cross_entropy");
  CREW_CHECK(logits.dim() >= 2, "cross_entropy: logits must be [N, K] or [..., K], got shape ",
             shape_str(logits.shape()));
  const int64_t k = logits.size(-1);
  const Shape rows(logits.shape().begin(), logits.shape().end() - 1);
  const std::vector<int64_t> lab = read_labels(labels, rows, k, "cross_entropy");
  int64_t counted = 0;
  for (int64_t v : lab) counted += v != kIgnoreIndex;
  Tensor per_row = Tensor::empty(rows, logits.dtype());
  Tensor probs = Tensor::uninitialized(logits.shape(), logits.dtype());
  dispatch_dtype(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (k > 0) cross_entropy_rows(logits.data<T>(), lab, k, per_row.data<T>(), probs.data<T>());
    }
  });
  Tensor y = per_row;
  double scale = 1.0;  // d y / d per_row[i] for MEAN and SUM
  if (reduction != Reduction::NONE) {
    double total = 0;
    for (double v : per_row.to_vector<double>()) total += v;
    if (reduction == Reduction::MEAN) scale = counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0;
    y = Tensor::scalar(total * scale, logits.dtype());
  }
  if (autograd::should_record({&logits})) {
    autograd::record(y, "cross_entropy", {logits},
                     [probs, lab, k, scale, reduction](const Tensor& g, const std::vector<bool>&) {
                       Tensor gx = probs.clone();
                       dispatch_dtype(g.dtype(), [&](auto tag) {
                         using T = decltype(tag);
                         if constexpr (std::is_floating_point_v<T>) {
                           cross_entropy_grad(gx.data<T>(), lab, k, g.data<T>(), scale,
                                              reduction == Reduction::NONE);
                         }
                       });
                       return std::vector<Tensor>{gx};
                     });
  }
  return y;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
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
  const std::vector<int64_t> lab = read_labels(labels, {n}, classes, "accuracy");
  const std::vector<double> x = logits.to_vector<double>();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (lab[i] == kIgnoreIndex) continue;
    const double target = x[i * classes + lab[i]];
    int64_t above = 0;  // classes ranked strictly before the label
    for (int64_t j = 0; j < classes; ++j) {
      const double v = x[i * classes + j];
      above += v > target || (v == target && j < lab[i]);
    }
    correct += above < k;
  }
  return Tensor::scalar(static_cast<double>(correct) / static_cast<double>(n));
}

}  // namespace crew::nn::functional
