#include "crew/tensor/kernels/copy_strided.h"

#include <cstring>
#include <string>

#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

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

Tensor permute_cpu(const Tensor& x, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) out[d] = x.shape()[perm[d]];
  Tensor y = Tensor::uninitialized(out, x.dtype());
  if (x.dim() == 0 || x.numel() == 0) {
    if (x.numel() > 0) y.copy_(x);
    return y;
  }
  dispatch_storage_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    permute_copy(x.data<T>(), y.data<T>(), x.shape(), out, perm);
  });
  return y;
}

// For each of `outer` blocks, `row` bytes from src (stride src_row) to dst (stride dst_row).
void copy_blocks(const char* src, int64_t src_row, char* dst, int64_t dst_row, int64_t outer, int64_t row) {
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * dst_row, src + o * src_row, row);
}

Tensor slice_axis_cpu(const Tensor& x, int64_t axis, int64_t begin, int64_t end) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Shape out = x.shape();
  out[axis] = end - begin;
  Tensor y = Tensor::uninitialized(out, x.dtype());
  const int64_t es = static_cast<int64_t>(dtype_size(x.dtype()));
  const int64_t in_row = p.extent * p.inner * es, out_row = out[axis] * p.inner * es;
  if (y.numel() > 0) {
    copy_blocks(static_cast<const char*>(x.raw_data()) + begin * p.inner * es, in_row,
                static_cast<char*>(y.raw_data()), out_row, p.outer, out_row);
  }
  return y;
}

Tensor slice_scatter_cpu(const Tensor& g, const Shape& shape, int64_t axis, int64_t begin) {
  const AxisSplit p = split_at_axis(shape, axis);
  Tensor gx = Tensor::zeros(shape, g.dtype());
  const int64_t es = static_cast<int64_t>(dtype_size(g.dtype()));
  const int64_t in_row = p.extent * p.inner * es, out_row = g.shape()[axis] * p.inner * es;
  if (g.numel() > 0) {
    copy_blocks(static_cast<const char*>(g.raw_data()), out_row,
                static_cast<char*>(gx.raw_data()) + begin * p.inner * es, in_row, p.outer, out_row);
  }
  return gx;
}

Tensor concat_cpu(const std::vector<Tensor>& xs, int64_t a, const Shape& out) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= out[d];
  for (int64_t d = a + 1; d < static_cast<int64_t>(out.size()); ++d) inner *= out[d];
  const size_t es = dtype_size(xs[0].dtype());
  Tensor y = Tensor::uninitialized(out, xs[0].dtype());
  char* yp = static_cast<char*>(y.raw_data());
  const int64_t out_row = out[a] * inner;
  int64_t col = 0;
  for (const Tensor& t : xs) {
    const int64_t row = t.shape()[a] * inner;
    const char* tp = static_cast<const char*>(t.raw_data());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(yp + (o * out_row + col) * es, tp + o * row * es, row * es);
    col += row;
  }
  return y;
}

}  // namespace

constinit KernelSlot<PermuteFn> permute_kernel("permute", &permute_cpu);
constinit KernelSlot<SliceAxisFn> slice_axis_kernel("slice_axis", &slice_axis_cpu);
constinit KernelSlot<SliceScatterFn> slice_scatter_kernel("slice_scatter", &slice_scatter_cpu);
constinit KernelSlot<ConcatFn> concat_kernel("concat", &concat_cpu);

Tensor permute(const Tensor& x, const std::vector<int64_t>& perm) {
  return permute_kernel.get(x.place().type)(x, perm);
}

Tensor slice_axis(const Tensor& x, int64_t axis, int64_t begin, int64_t end) {
  return slice_axis_kernel.get(x.place().type)(x, axis, begin, end);
}

Tensor slice_scatter(const Tensor& g, const Shape& shape, int64_t axis, int64_t begin) {
  return slice_scatter_kernel.get(g.place().type)(g, shape, axis, begin);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis, const Shape& out) {
  CREW_CHECK(!xs.empty(), "concat: no tensors given");
  for (size_t i = 1; i < xs.size(); ++i) {
    if (!xs[i].defined() || !xs[0].defined() || xs[i].place() == xs[0].place()) continue;  // name only for the error
    const std::string name = "xs[" + std::to_string(i) + "]";
    check_same_place("concat", {{"xs[0]", &xs[0]}, {name.c_str(), &xs[i]}});
  }
  return concat_kernel.get(xs[0].place().type)(xs, axis, out);
}

}  // namespace crew::kernels
