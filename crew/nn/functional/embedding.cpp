// embedding: a row gather from weight [V, D]; the backward scatter-adds into [V, D]
// (crew/tensor/kernels/embedding).
#include "crew/tensor/kernels/embedding.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {

Tensor embedding(const Tensor& ids, const Tensor& weight, int64_t padding_idx) {
  if (auto in = amp::autocast_operands("embedding", weight)) return embedding(ids, (*in)[0], padding_idx);
  kernels::check_floating(weight, "embedding");
  CREW_CHECK(weight.dim() == 2, "embedding: weight must be [V, D], got shape ", shape_str(weight.shape()));
  const int64_t vocab = weight.size(0);
  CREW_CHECK(padding_idx == -1 || (padding_idx >= 0 && padding_idx < vocab), "embedding: padding_idx ",
             padding_idx, " must be -1 (none) or in [0, ", vocab, ")");
  CREW_CHECK(ids.dtype() == DType::INT64 || ids.dtype() == DType::INT32,
             "embedding: ids must be int64 or int32, got ", dtype_name(ids.dtype()));
  // Host ids (e.g. a batch read on the host) index a table on a device: copied there.
  const Tensor placed =
      ids.place() != weight.place() && ids.place().host_accessible() ? ids.to(weight.place()) : ids;
  Tensor y = kernels::embedding_forward(placed, weight, padding_idx);
  if (autograd::should_record({&weight})) {
    autograd::record(y, "embedding", {weight},
                     [ids = placed.detach(), vocab, padding_idx](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::embedding_backward(g, ids, vocab, padding_idx)};
                     });
  }
  return y;
}

}  // namespace crew::nn::functional
