#include "crew/distributed/collective/any_rank.h"

#include "crew/distributed/collective/collective.h"

namespace crew::dist {

bool any_rank(bool flag, Group* group) {
  if (!is_initialized() || get_world_size(group) < 2) return flag;
  Tensor t = Tensor::scalar(flag ? 1.0 : 0.0, DType::FLOAT32);
  all_reduce(t, ReduceOp::MAX, group);
  return t.item() > 0.0;
}

}  // namespace crew::dist
