// matmul and transpose2d.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/copy_strided.h"
#include "crew/tensor/kernels/gemm.h"

namespace crew {
namespace {

// Sums a broadcast-batch gradient back onto the input's shape.
Tensor fold_batch(const Tensor& g, const Shape& input_shape) {
  if (g.shape() == input_shape) return g;
  return kernels::sum_to(g, input_shape);
}

// [..., C] viewed as [rows, C].
Tensor as_rows(const Tensor& t) { return t.view({-1, t.size(-1)}); }

// C = op(A) op(B): dA = g op(B)^T (transposed back when ta), dB = op(A)^T g (likewise).
std::vector<Tensor> matmul_backward(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& g,
                                    const std::vector<bool>& n) {
  Tensor ga, gb;
  if (n[0])
    ga = fold_batch(ta ? kernels::matmul(b, g, tb, true) : kernels::matmul(g, b, false, !tb), a.shape());
  if (n[1]) {
    if (b.dim() == 2 && a.dim() > 2 && !ta) {  // one gemm over all of a's rows, no batch to sum
      gb = tb ? kernels::matmul(as_rows(g), as_rows(a), true, false)
              : kernels::matmul(as_rows(a), as_rows(g), true, false);
    } else {
      gb = fold_batch(tb ? kernels::matmul(g, a, true, ta) : kernels::matmul(a, g, !ta, false), b.shape());
    }
  }
  return {ga, gb};
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  if (auto in = amp::autocast_operands("matmul", a, b)) return matmul((*in)[0], (*in)[1], ta, tb);
  Tensor y = kernels::matmul(a, b, ta, tb);
  if (autograd::should_record({&a, &b})) {
    autograd::record(y, "matmul", {a, b}, [a, b, ta, tb](const Tensor& g, const std::vector<bool>& n) {
      return matmul_backward(a, b, ta, tb, g, n);
    }, {a, b});
  }
  return y;
}

Tensor transpose2d(const Tensor& x) {
  CREW_CHECK(x.dim() == 2, "transpose2d: expected a 2-d tensor, got shape ", shape_str(x.shape()));
  Tensor y = kernels::permute(x, {1, 0});
  if (autograd::should_record({&x})) {
    autograd::record(y, "transpose2d", {x}, [](const Tensor& g, const std::vector<bool>&) {
      NoGradGuard no_grad;
      return std::vector<Tensor>{transpose2d(g)};
    });
  }
  return y;
}

}  // namespace crew
