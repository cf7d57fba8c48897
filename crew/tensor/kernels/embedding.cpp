#include "crew/tensor/kernels/embedding.h"

#include <cstring>
#include <type_traits>

#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

// Calls f(ids as const I*) for int64 or int32 ids.
template <typename F>
void with_ids(const Tensor& ids, F f) {
  if (ids.dtype() == DType::INT64) {
    f(ids.data<int64_t>());
  } else {
    CREW_CHECK(ids.dtype() == DType::INT32, "embedding: ids must be int64 or int32, got ",
               dtype_name(ids.dtype()));
    f(ids.data<int32_t>());
  }
}

template <typename I>
void check_ids(const I* ids, int64_t n, int64_t vocab) {
  for (int64_t i = 0; i < n; ++i) {
    const auto id = static_cast<int64_t>(ids[i]);
    CREW_CHECK_T(IndexError, id >= 0 && id < vocab, "embedding: id ", id, " at position ", i,
                 " is outside [0, ", vocab, ") (num_embeddings V = ", vocab, ")");
  }
}

Tensor forward_cpu(const Tensor& ids, const Tensor& weight, int64_t padding_idx) {
  const int64_t vocab = weight.size(0), width = weight.size(1), n = ids.numel();
  Shape out = ids.shape();
  out.push_back(width);
  Tensor y = Tensor::uninitialized(out, weight.dtype());
  if (n == 0) return y;
  const size_t row_bytes = static_cast<size_t>(width) * dtype_size(weight.dtype());
  const char* wp = static_cast<const char*>(weight.raw_data());
  char* yp = static_cast<char*>(y.raw_data());
  with_ids(ids, [&](const auto* rows) {
    check_ids(rows, n, vocab);
    crew::detail::parallel_for(n, 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const auto row = static_cast<int64_t>(rows[i]);
        if (row == padding_idx) {
          std::memset(yp + i * row_bytes, 0, row_bytes);  // Paddle outputs zeros for padding ids
        } else {
          std::memcpy(yp + i * row_bytes, wp + row * row_bytes, row_bytes);
        }
      }
    });
  });
  return y;
}

Tensor backward_cpu(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  const int64_t width = g.size(-1), n = ids.numel();
  Tensor gw = Tensor::zeros({vocab, width}, g.dtype());
  if (n == 0) return gw;
  dispatch_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* gp = g.data<T>();
    T* dst = gw.data<T>();
    with_ids(ids, [&](const auto* rows) {
      for (int64_t i = 0; i < n; ++i) {
        const auto r = static_cast<int64_t>(rows[i]);
        if (r == padding_idx) continue;
        T* row = dst + r * width;
        const T* src = gp + i * width;
        for (int64_t d = 0; d < width; ++d) row[d] += src[d];
      }
    });
  });
  return gw;
}

}  // namespace

constinit KernelSlot<EmbeddingForwardFn> embedding_forward_kernel("embedding_forward", &forward_cpu);
constinit KernelSlot<EmbeddingBackwardFn> embedding_backward_kernel("embedding_backward", &backward_cpu);

Tensor embedding_forward(const Tensor& ids, const Tensor& weight, int64_t padding_idx) {
  check_same_place("embedding", {{"ids", &ids}, {"weight", &weight}});
  return embedding_forward_kernel.get(weight.place().type)(ids, weight, padding_idx);
}

Tensor embedding_backward(const Tensor& grad_y, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  check_same_place("embedding backward", {{"grad_y", &grad_y}, {"ids", &ids}});
  return embedding_backward_kernel.get(grad_y.place().type)(grad_y, ids, vocab, padding_idx);
}

}  // namespace crew::kernels
