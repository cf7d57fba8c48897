#include "crew/tensor/kernels/softmax_rows.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/dnnl_context.h"

namespace crew::kernels {
namespace {

struct SoftmaxEntry {
  dnnl::memory::desc md;
  dnnl::softmax_forward fwd;
  dnnl::softmax_backward bwd;
};

std::shared_ptr<SoftmaxEntry> softmax_entry(int64_t rows, int64_t cols) {
  static detail::PrimitiveCache<SoftmaxEntry> cache;
  return cache.get(str_cat(rows, ',', cols), [&] {
    auto e = std::make_shared<SoftmaxEntry>();
    e->md = detail::plain_desc({rows, cols});
    dnnl::softmax_forward::primitive_desc fpd({dnnl::prop_kind::forward_training, e->md, 1},
                                              detail::cpu_engine());
    e->fwd = dnnl::softmax_forward(fpd);
    e->bwd = dnnl::softmax_backward(
        dnnl::softmax_backward::primitive_desc({e->md, e->md, 1}, detail::cpu_engine(), fpd));
    return e;
  });
}

void softmax_rows_f64(double* x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double* row = x + r * cols;
    double mx = row[0], total = 0;
    for (int64_t c = 1; c < cols; ++c) mx = std::max(mx, row[c]);
    for (int64_t c = 0; c < cols; ++c) total += row[c] = std::exp(row[c] - mx);
    for (int64_t c = 0; c < cols; ++c) row[c] /= total;
  }
}

void softmax_backward_f64(const double* y, const double* g, double* gx, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += g[r * cols + c] * y[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) gx[r * cols + c] = y[r * cols + c] * (g[r * cols + c] - dot);
  }
}

void softmax_rows_cpu(const Tensor& x) {
  check_floating(x, "softmax_rows");
  CREW_CHECK(x.dim() >= 1, "softmax_rows: tensor of shape ", shape_str(x.shape()), " has no axis");
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  if (rows == 0) return;
  if (x.dtype() == DType::FLOAT64) return softmax_rows_f64(x.data<double>(), rows, cols);
  try {
    auto e = softmax_entry(rows, cols);
    dnnl::memory m = detail::as_memory(x, e->md);
    e->fwd.execute(detail::cpu_stream(), {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("softmax forward", err);
  }
}

Tensor softmax_rows_backward_cpu(const Tensor& y, const Tensor& grad_y) {
  CREW_CHECK(y.shape() == grad_y.shape() && y.dtype() == grad_y.dtype(), "softmax_rows backward: grad ",
             shape_str(grad_y.shape()), " does not match output ", shape_str(y.shape()));
  Tensor gx = Tensor::uninitialized(y.shape(), y.dtype());
  const int64_t cols = y.size(-1), rows = cols == 0 ? 0 : y.numel() / cols;
  if (rows == 0) return gx;
  if (y.dtype() == DType::FLOAT64) {
    softmax_backward_f64(y.data<double>(), grad_y.data<double>(), gx.data<double>(), rows, cols);
    return gx;
  }
  try {
    auto e = softmax_entry(rows, cols);
    e->bwd.execute(detail::cpu_stream(), {{DNNL_ARG_DST, detail::as_memory(y, e->md)},
                                          {DNNL_ARG_DIFF_DST, detail::as_memory(grad_y, e->md)},
                                          {DNNL_ARG_DIFF_SRC, detail::as_memory(gx, e->md)}});
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("softmax backward", err);
  }
  return gx;
}

}  // namespace

constinit KernelSlot<SoftmaxRowsFn> softmax_rows_kernel("softmax_rows", &softmax_rows_cpu);
constinit KernelSlot<SoftmaxRowsBackwardFn> softmax_rows_backward_kernel("softmax_rows_backward",
                                                                         &softmax_rows_backward_cpu);

void softmax_rows_(const Tensor& x) { softmax_rows_kernel.get(x.place().type)(x); }

Tensor softmax_rows_backward(const Tensor& y, const Tensor& grad_y) {
  check_same_place("softmax_rows backward", {{"y", &y}, {"grad_y", &grad_y}});
  return softmax_rows_backward_kernel.get(y.place().type)(y, grad_y);
}

}  // namespace crew::kernels
