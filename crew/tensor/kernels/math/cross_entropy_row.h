#pragma once
// One row of cross_entropy over k logits: the softmax probabilities and the loss
// -log_softmax(row)[label] (numerically stable: the row maximum is subtracted), and the
// gradient g * (softmax - onehot(label)). A label of kIgnoreIndex adds no loss and no
// gradient. The CPU loops of crew/tensor/kernels/cross_entropy.cpp run these, a device
// backend's kernel the same code.
#include <cmath>
#include <cstdint>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels::math {

// Paddle's default ignore_index.
constexpr int64_t kIgnoreIndex = -100;

template <typename T>
struct CrossEntropyRow {
  // probs[0, k) = softmax(row); returns the row's loss (0 for an ignored label).
  CREW_HD static T forward(const T* row, int64_t label, int64_t k, T* probs) {
    T mx = row[0];
    for (int64_t j = 1; j < k; ++j) mx = row[j] > mx ? row[j] : mx;
    T total = 0;
    for (int64_t j = 0; j < k; ++j) total += probs[j] = std::exp(row[j] - mx);
    const T log_total = std::log(total), inv_total = T(1) / total;
    for (int64_t j = 0; j < k; ++j) probs[j] *= inv_total;
    return label == kIgnoreIndex ? T(0) : -(row[label] - mx - log_total);
  }
  // In place over the row's probabilities: d loss / d logits = g * (probs - onehot(label)).
  CREW_HD static void backward(T* probs, int64_t label, int64_t k, T g) {
    if (label == kIgnoreIndex) {
      for (int64_t j = 0; j < k; ++j) probs[j] = T(0);
      return;
    }
    probs[label] -= 1;
    for (int64_t j = 0; j < k; ++j) probs[j] *= g;
  }
};

}  // namespace crew::kernels::math
