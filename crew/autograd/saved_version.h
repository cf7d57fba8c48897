#pragma once
// A tensor a node's backward reads, with the version of its storage when the node was
// recorded. Changing such data in place afterwards (Tensor::copy_, fill_, zero_, an optimizer
// step, ...) bumps the version, and backward through the node then raises StateError instead
// of computing a gradient from the changed values (PyTorch's and Paddle's rule).
//
//   Tensor y = mul(a, b);   // saves a and b at their current versions
//   a.fill_(10);            // version of a's storage: 0 -> 1
//   y.backward(g);          // StateError: "... modified by an inplace operation ..."
#include <cstdint>
#include <memory>

#include "crew/tensor/tensor.h"

namespace crew::autograd {

class SavedVersion {
 public:
  // Counts as a holder of the storage (Storage::saved_for_backward) until destroyed.
  explicit SavedVersion(const Tensor& saved);
  ~SavedVersion();
  SavedVersion(SavedVersion&& other) noexcept;
  SavedVersion& operator=(SavedVersion&&) = delete;
  SavedVersion(const SavedVersion&) = delete;
  SavedVersion& operator=(const SavedVersion&) = delete;

  // Throws StateError naming `op` when the storage changed since it was saved.
  void check(const char* op) const;

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_;
  uint64_t version_;
};

}  // namespace crew::autograd
