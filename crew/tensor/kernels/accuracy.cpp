#include "crew/tensor/kernels/accuracy.h"

#include "crew/tensor/kernels/math/cross_entropy_row.h"

namespace crew::kernels {
namespace {

using math::kIgnoreIndex;

template <typename T>
int64_t count_rows(const T* x, const int64_t* lab, int64_t n, int64_t classes, int64_t k) {
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (lab[i] == kIgnoreIndex) continue;
    const T target = x[i * classes + lab[i]];
    int64_t above = 0;  // classes ranked strictly before the label
    for (int64_t j = 0; j < classes; ++j) {
      const T v = x[i * classes + j];
      above += v > target || (v == target && j < lab[i]);
    }
    correct += above < k;
  }
  return correct;
}

int64_t accuracy_count_cpu(const Tensor& logits, const Tensor& labels, int64_t k) {
  const int64_t n = logits.size(0), classes = logits.size(1);
  const int64_t* lab = labels.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    CREW_CHECK_T(IndexError, lab[i] == kIgnoreIndex || (lab[i] >= 0 && lab[i] < classes), "accuracy: label ",
                 lab[i], " at row ", i, " is outside [0, ", classes, ")");
  }
  int64_t correct = 0;
  dispatch_dtype(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    correct = count_rows(logits.data<T>(), lab, n, classes, k);
  });
  return correct;
}

}  // namespace

constinit KernelSlot<AccuracyCountFn> accuracy_count_kernel("accuracy_count", &accuracy_count_cpu);

int64_t accuracy_count(const Tensor& logits, const Tensor& labels, int64_t k) {
  check_same_place("accuracy", {{"logits", &logits}, {"labels", &labels}});
  return accuracy_count_kernel.get(logits.place().type)(logits, labels, k);
}

}  // namespace crew::kernels
