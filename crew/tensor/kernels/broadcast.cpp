#include "crew/tensor/kernels/broadcast.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

// Element strides of `in` aligned to the trailing axes of `out`; 0 on broadcast axes.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  const size_t r = out.size();
  std::vector<int64_t> strides(r, 0);
  int64_t s = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t din = in.size() - 1 - k;
    const size_t dout = r - 1 - k;
    strides[dout] = in[din] == 1 ? 0 : s;
    s *= in[din];
  }
  return strides;
}

// Calls inner(out_offset, a_offset, b_offset, n, a_step, b_step) once per run of the last
// axis of `out`, for inputs with strides sa and sb.
template <typename Inner>
void for_each_row(const Shape& out, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb,
                  Inner&& inner) {
  const size_t r = out.size();
  if (r == 0) {
    inner(0, 0, 0, 1, 0, 0);
    return;
  }
  const int64_t n = out[r - 1];
  const int64_t total = shape_numel(out);
  if (total == 0) return;
  std::vector<int64_t> idx(r, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < total; o += n) {
    inner(o, ia, ib, n, sa[r - 1], sb[r - 1]);
    for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < out[d]) break;
      ia -= sa[d] * out[d];
      ib -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

template <typename T, typename F>
void binary_rows(const T* a, const T* b, T* y, const Shape& out, const std::vector<int64_t>& sa,
                 const std::vector<int64_t>& sb, F f) {
  for_each_row(out, sa, sb, [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t da, int64_t db) {
    T* yo = y + o;
    const T* ap = a + ia;
    const T* bp = b + ib;
    if (da == 1 && db == 1) {
      for (int64_t i = 0; i < n; ++i) yo[i] = f(ap[i], bp[i]);
    } else if (da == 1 && db == 0) {
      const T bv = *bp;
      for (int64_t i = 0; i < n; ++i) yo[i] = f(ap[i], bv);
    } else if (da == 0 && db == 1) {
      const T av = *ap;
      for (int64_t i = 0; i < n; ++i) yo[i] = f(av, bp[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) yo[i] = f(ap[i * da], bp[i * db]);
    }
  });
}

template <typename T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& y) {
  const Shape& out = y.shape();
  const auto sa = broadcast_strides(a.shape(), out);
  const auto sb = broadcast_strides(b.shape(), out);
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* yp = y.data<T>();
  switch (op) {
    case BinaryOp::ADD:
      binary_rows(ap, bp, yp, out, sa, sb, [](T u, T v) { return u + v; });
      break;
    case BinaryOp::SUB:
      binary_rows(ap, bp, yp, out, sa, sb, [](T u, T v) { return u - v; });
      break;
    case BinaryOp::MUL:
      binary_rows(ap, bp, yp, out, sa, sb, [](T u, T v) { return u * v; });
      break;
    case BinaryOp::DIV:
      binary_rows(ap, bp, yp, out, sa, sb, [](T u, T v) { return u / v; });
      break;
  }
}

}  // namespace

void check_floating(const Tensor& t, const char* op) {
  CREW_CHECK(t.defined(), op, ": tensor is undefined");
  if (is_low_precision(t.dtype())) throw_no_dtype_kernel(op, t.dtype());
  CREW_CHECK(t.dtype() == DType::FLOAT32 || t.dtype() == DType::FLOAT64, op,
             ": expected a float32 or float64 tensor, got ", dtype_name(t.dtype()));
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    CREW_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
               " cannot be broadcast together");
    out[r - 1 - k] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// a (op) b on two tensors in one blocked layout (a conv's or batch norm's output, e.g. a
// residual sum), computed on their bytes as they are and kept in that layout, so that the next
// conv reads it without a reorder and neither operand is converted to row-major. The layout's
// padding is zero in both and stays zero (not for DIV: 0 / 0). Undefined when not applicable.
Tensor binary_in_layout(BinaryOp op, const Tensor& a, const Tensor& b) {
  const detail::DnnlLayout* layout = detail::shared_float_layout(a, b);
  if (layout == nullptr || op == BinaryOp::DIV) return Tensor();
  Tensor y = Tensor::with_layout(a.shape(), a.dtype(), detail::dnnl_layout(layout->desc()));
  const auto* ap = static_cast<const float*>(a.layout_data());
  const auto* bp = static_cast<const float*>(b.layout_data());
  auto* yp = static_cast<float*>(y.layout_data());
  const int64_t n = static_cast<int64_t>(layout->bytes() / sizeof(float));
  switch (op) {
    case BinaryOp::ADD:
      for (int64_t i = 0; i < n; ++i) yp[i] = ap[i] + bp[i];
      break;
    case BinaryOp::SUB:
      for (int64_t i = 0; i < n; ++i) yp[i] = ap[i] - bp[i];
      break;
    case BinaryOp::MUL:
      for (int64_t i = 0; i < n; ++i) yp[i] = ap[i] * bp[i];
      break;
    case BinaryOp::DIV:
      break;
  }
  return y;
}

Tensor binary_cpu(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out) {
  if (Tensor y = binary_in_layout(op, a, b); y.defined()) return y;
  Tensor y = Tensor::uninitialized(out, a.dtype());
  if (a.dtype() == DType::FLOAT32) {
    binary_typed<float>(op, a, b, y);
  } else {
    binary_typed<double>(op, a, b, y);
  }
  return y;
}

Tensor sum_to_cpu(const Tensor& g, const Shape& shape) {
  Tensor out = Tensor::zeros(shape, g.dtype());
  const auto so = broadcast_strides(shape, g.shape());
  const std::vector<int64_t> sg = broadcast_strides(g.shape(), g.shape());
  dispatch_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = g.data<T>();
      T* op = out.data<T>();
      for_each_row(g.shape(), so, sg, [&](int64_t o, int64_t io, int64_t, int64_t n, int64_t d, int64_t) {
        const T* src = gp + o;
        T* dst = op + io;
        if (d == 1) {
          for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
        } else {
          T acc = 0;
          for (int64_t i = 0; i < n; ++i) acc += src[i];
          *dst += acc;
        }
      });
    }
  });
  return out;
}

Tensor affine_cpu(const Tensor& a, double alpha, double beta) {
  Tensor y = Tensor::uninitialized(a.shape(), a.dtype());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* ap = a.data<T>();
      T* yp = y.data<T>();
      const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
      for (int64_t i = 0, n = a.numel(); i < n; ++i) yp[i] = ap[i] * al + be;
    }
  });
  return y;
}

void add_inplace_cpu(const Tensor& dst, const Tensor& src) {
  // Both in one blocked layout (two branches' gradients of a residual block): add the bytes
  // as they are, padding included (zeros), and dst stays blocked.
  if (const detail::DnnlLayout* layout = detail::shared_float_layout(dst, src)) {
    auto* d = static_cast<float*>(dst.layout_data());
    const auto* s = static_cast<const float*>(src.layout_data());
    for (size_t i = 0, n = layout->bytes() / sizeof(float); i < n; ++i) d[i] += s[i];
    return;
  }
  dispatch_dtype(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      T* d = dst.data<T>();
      const T* s = src.data<T>();
      for (int64_t i = 0, n = dst.numel(); i < n; ++i) d[i] += s[i];
    }
  });
}

}  // namespace

constinit KernelSlot<BinaryFn> binary_kernel("binary", &binary_cpu);
constinit KernelSlot<SumToFn> sum_to_kernel("sum_to", &sum_to_cpu);
constinit KernelSlot<AffineFn> affine_kernel("affine", &affine_cpu);
constinit KernelSlot<AddInplaceFn> add_inplace_kernel("add_inplace", &add_inplace_cpu);

// The elementwise ops below take bfloat16/float16 through float32: they are memory-bound
// loops (a 16-bit kernel would save little) that backward's gradient sums also run.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(name, "a", a, "b", b);
  if (is_low_precision(a.dtype())) return binary(op, to_float32(a), to_float32(b), name).to(a.dtype());
  check_floating(a, name);
  check_floating(b, name);
  check_same_place(name, {{"a", &a}, {"b", &b}});
  const Shape out = broadcast_shapes(a.shape(), b.shape(), name);
  return binary_kernel.get(a.place().type)(op, a, b, out);
}

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  if (is_low_precision(g.dtype())) return sum_to(to_float32(g), shape).to(g.dtype());
  check_floating(g, "sum_to");
  broadcast_shapes(shape, g.shape(), "sum_to");
  return sum_to_kernel.get(g.place().type)(g, shape);
}

Tensor affine(const Tensor& a, double alpha, double beta) {
  if (is_low_precision(a.dtype())) return affine(to_float32(a), alpha, beta).to(a.dtype());
  check_floating(a, "affine");
  return affine_kernel.get(a.place().type)(a, alpha, beta);
}

void add_inplace(const Tensor& dst, const Tensor& src) {
  check_floating_or_half(dst, "add_inplace");
  CREW_CHECK(dst.dtype() == src.dtype() && dst.numel() == src.numel(),
             "add_inplace: ", shape_str(dst.shape()), " ", dtype_name(dst.dtype()),
             " += ", shape_str(src.shape()), " ", dtype_name(src.dtype()));
  check_same_place("add_inplace", {{"dst", &dst}, {"src", &src}});
  if (is_low_precision(dst.dtype())) {
    // Sum in float32, round once: a 16-bit gradient accumulates without a second rounding.
    Tensor sum = to_float32(dst);
    add_inplace(sum, to_float32(src));
    Tensor(dst).copy_(sum.to(dst.dtype()));
    return;
  }
  add_inplace_kernel.get(dst.place().type)(dst, src);
}

}  // namespace crew::kernels
