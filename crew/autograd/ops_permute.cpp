// permute and transpose: axis reorderings as contiguous copies.
#include <numeric>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/copy_strided.h"

namespace crew {
namespace {

std::vector<int64_t> checked_perm(const Tensor& x, const std::vector<int64_t>& perm) {
  const int64_t nd = x.dim();
  CREW_CHECK(static_cast<int64_t>(perm.size()) == nd, "permute: perm has ", perm.size(),
             " axes for a tensor of shape ", shape_str(x.shape()));
  std::vector<int64_t> out(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    out[i] = normalize_axis(perm[i], nd);
    CREW_CHECK(!seen[out[i]], "permute: axis ", perm[i], " appears twice in perm for shape ",
               shape_str(x.shape()));
    seen[out[i]] = true;
  }
  return out;
}

}  // namespace

Tensor permute(const Tensor& x, const std::vector<int64_t>& perm_in) {
  const std::vector<int64_t> perm = checked_perm(x, perm_in);
  Tensor y = kernels::permute(x, perm);
  if (autograd::should_record({&x})) {
    std::vector<int64_t> inverse(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) inverse[perm[d]] = static_cast<int64_t>(d);
    autograd::record(y, "permute", {x}, [inverse](const Tensor& g, const std::vector<bool>&) {
      NoGradGuard no_grad;
      return std::vector<Tensor>{permute(g, inverse)};
    });
  }
  return y;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> perm(static_cast<size_t>(x.dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[normalize_axis(dim0, x.dim())], perm[normalize_axis(dim1, x.dim())]);
  return permute(x, perm);
}

}  // namespace crew
