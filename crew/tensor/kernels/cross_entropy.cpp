#include "crew/tensor/kernels/cross_entropy.h"

#include <type_traits>

#include "crew/tensor/kernels/math/cross_entropy_row.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

using math::kIgnoreIndex;

// The number of rows whose label counts; IndexError for a label outside [0, k).
int64_t check_labels(const int64_t* labels, int64_t n, int64_t k) {
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    CREW_CHECK_T(IndexError, labels[i] == kIgnoreIndex || (labels[i] >= 0 && labels[i] < k),
                 "cross_entropy: label ", labels[i], " at row ", i, " is outside [0, ", k, ")");
    counted += labels[i] != kIgnoreIndex;
  }
  return counted;
}

std::tuple<Tensor, Tensor, int64_t> forward_cpu(const Tensor& logits, const Tensor& labels) {
  const int64_t k = logits.size(-1);
  const Shape rows(logits.shape().begin(), logits.shape().end() - 1);
  const int64_t n = shape_numel(rows);
  const int64_t* lab = n > 0 ? labels.data<int64_t>() : nullptr;
  const int64_t counted = check_labels(lab, n, k);
  Tensor per_row = Tensor::empty(rows, logits.dtype());
  Tensor probs = Tensor::uninitialized(logits.shape(), logits.dtype());
  dispatch_dtype(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (k == 0 || n == 0) return;
      const T* x = logits.data<T>();
      T* loss = per_row.data<T>();
      T* p = probs.data<T>();
      crew::detail::parallel_for(n, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          loss[i] = math::CrossEntropyRow<T>::forward(x + i * k, lab[i], k, p + i * k);
      });
    }
  });
  return {per_row, probs, counted};
}

Tensor backward_cpu(const Tensor& probs, const Tensor& labels, const Tensor& grad_y, double scale,
                    bool per_row) {
  Tensor gx = probs.clone();
  const int64_t k = probs.size(-1), n = k == 0 ? 0 : probs.numel() / k;
  if (n == 0) return gx;
  const int64_t* lab = labels.data<int64_t>();
  dispatch_dtype(gx.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      T* p = gx.data<T>();
      const T* go = grad_y.data<T>();
      crew::detail::parallel_for(n, 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const T gi = per_row ? go[i] : static_cast<T>(go[0] * scale);
          math::CrossEntropyRow<T>::backward(p + i * k, lab[i], k, gi);
        }
      });
    }
  });
  return gx;
}

}  // namespace

constinit KernelSlot<CrossEntropyForwardFn> cross_entropy_forward_kernel("cross_entropy_forward",
                                                                         &forward_cpu);
constinit KernelSlot<CrossEntropyBackwardFn> cross_entropy_backward_kernel("cross_entropy_backward",
                                                                           &backward_cpu);

std::tuple<Tensor, Tensor, int64_t> cross_entropy_forward(const Tensor& logits, const Tensor& labels) {
  check_same_place("cross_entropy", {{"logits", &logits}, {"labels", &labels}});
  return cross_entropy_forward_kernel.get(logits.place().type)(logits, labels);
}

Tensor cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& grad_y, double scale,
                              bool per_row) {
  check_same_place("cross_entropy backward", {{"probs", &probs}, {"labels", &labels}, {"grad_y", &grad_y}});
  return cross_entropy_backward_kernel.get(probs.place().type)(probs, labels, grad_y, scale, per_row);
}

}  // namespace crew::kernels
