// embedding: a row gather from weight [V, D]; the backward scatter-adds into [V, D].
#include <cstring>

#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::nn::functional {
namespace {

// ids (int64 or int32, any shape) as int64 values, each checked against the vocabulary size.
std::vector<int64_t> read_ids(const Tensor& ids, int64_t vocab) {
  CREW_CHECK(ids.dtype() == DType::INT64 || ids.dtype() == DType::INT32,
             "embedding: ids must be int64 or int32, got ", dtype_name(ids.dtype()));
  std::vector<int64_t> out = ids.to_vector<int64_t>();
  for (size_t i = 0; i < out.size(); ++i) {
    CREW_CHECK_T(IndexError, out[i] >= 0 && out[i] < vocab, "embedding: id ", out[i], " at position ", i,
                 " is outside [0, ", vocab, ") (num_embeddings V = ", vocab, ")");
  }
  return out;
}

}  // namespace

Tensor embedding(const Tensor& ids, const Tensor& weight, int64_t padding_idx) {
  kernels::check_floating(weight, "embedding");
  CREW_CHECK(weight.dim() == 2, "embedding: weight must be [V, D], got shape ", shape_str(weight.shape()));
  const int64_t vocab = weight.size(0), width = weight.size(1);
  CREW_CHECK(padding_idx == -1 || (padding_idx >= 0 && padding_idx < vocab), "embedding: padding_idx ",
             padding_idx, " must be -1 (none) or in [0, ", vocab, ")");
  const std::vector<int64_t> rows = read_ids(ids, vocab);
  Shape out = ids.shape();
  out.push_back(width);
  Tensor y = Tensor::uninitialized(out, weight.dtype());
  const size_t row_bytes = static_cast<size_t>(width) * dtype_size(weight.dtype());
  const char* wp = static_cast<const char*>(weight.raw_data());
  char* yp = static_cast<char*>(y.raw_data());
  detail::parallel_for(static_cast<int64_t>(rows.size()), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (rows[i] == padding_idx) {
        std::memset(yp + i * row_bytes, 0, row_bytes);  // Paddle outputs zeros for padding ids
      } else {
        std::memcpy(yp + i * row_bytes, wp + rows[i] * row_bytes, row_bytes);
      }
    }
  });
  if (autograd::should_record({&weight})) {
    autograd::record(y, "embedding", {weight},
                     [rows, vocab, width, padding_idx](const Tensor& g, const std::vector<bool>&) {
                       Tensor gw = Tensor::zeros({vocab, width}, g.dtype());
                       dispatch_dtype(g.dtype(), [&](auto tag) {
                         using T = decltype(tag);
                         const T* gp = g.data<T>();
                         T* dst = gw.data<T>();
                         for (size_t i = 0; i < rows.size(); ++i) {
                           if (rows[i] == padding_idx) continue;
                           T* row = dst + rows[i] * width;
                           const T* src = gp + i * width;
                           for (int64_t d = 0; d < width; ++d) row[d] += src[d];
                         }
                       });
                       return std::vector<Tensor>{gw};
                     });
  }
  return y;
}

}  // namespace crew::nn::functional
