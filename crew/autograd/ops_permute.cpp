// permute and transpose: axis reorderings as contiguous copies.
#include <cstring>
#include <numeric>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/threading.h"

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

// Copies x into y = x permuted, one output row (last output axis) at a time.
template <typename T>
void permute_copy(const T* xp, T* yp, const Shape& in, const Shape& out, const std::vector<int64_t>& perm) {
  const size_t nd = out.size();
  std::vector<int64_t> in_strides(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * in[d + 1];
  std::vector<int64_t> stride(nd);  // input stride of each output axis
  for (size_t d = 0; d < nd; ++d) stride[d] = in_strides[perm[d]];
  const int64_t cols = out[nd - 1], col_stride = stride[nd - 1];
  const int64_t rows = cols == 0 ? 0 : shape_numel(out) / cols;
  detail::parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t off = 0;
      for (int64_t d = static_cast<int64_t>(nd) - 2, rest = r; d >= 0; --d) {
        off += (rest % out[d]) * stride[d];
        rest /= out[d];
      }
      T* dst = yp + r * cols;
      const T* src = xp + off;
      if (col_stride == 1) {
        std::memcpy(dst, src, sizeof(T) * cols);
      } else {
        for (int64_t c = 0; c < cols; ++c) dst[c] = src[c * col_stride];
      }
    }
  });
}

}  // namespace

Tensor permute(const Tensor& x, const std::vector<int64_t>& perm_in) {
  const std::vector<int64_t> perm = checked_perm(x, perm_in);
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = x.shape()[perm[d]];
  Tensor y = Tensor::uninitialized(out, x.dtype());
  if (x.dim() == 0 || x.numel() == 0) {
    if (x.numel() > 0) y.copy_(x);
  } else {
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      permute_copy(x.data<T>(), y.data<T>(), x.shape(), out, perm);
    });
  }
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
