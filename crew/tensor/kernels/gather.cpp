#include "crew/tensor/kernels/gather.h"

#include <cstring>
#include <vector>

#include "crew/tensor/kernels/broadcast.h"

namespace crew::kernels {
namespace {

// The index values as int64, each checked against `extent` (negative ones wrapped).
std::vector<int64_t> index_values(const Tensor& index, int64_t extent, const char* op) {
  std::vector<int64_t> v = index.to_vector<int64_t>();
  for (int64_t& i : v) {
    CREW_CHECK_T(IndexError, i >= -extent && i < extent, op, ": index ", i, " is out of range for extent ",
                 extent);
    if (i < 0) i += extent;
  }
  return v;
}

Tensor expand_cpu(const Tensor& x, const Shape& shape) {
  const size_t r = shape.size();
  std::vector<int64_t> stride(r, 0);  // x's element stride per output axis, 0 where it repeats
  int64_t s = 1;
  for (size_t k = 0; k < x.shape().size(); ++k) {
    const size_t dx = x.shape().size() - 1 - k, d = r - 1 - k;
    stride[d] = x.shape()[dx] == 1 ? 0 : s;
    s *= x.shape()[dx];
  }
  Tensor y = Tensor::uninitialized(shape, x.dtype());
  const size_t esize = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  const int64_t n = y.numel();
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < n; ++o) {
    std::memcpy(dst + o * esize, src + off * esize, esize);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < shape[d]) break;
      off -= stride[d] * shape[d];
      idx[d] = 0;
    }
  }
  return y;
}

Tensor index_select_cpu(const Tensor& x, int64_t axis, const Tensor& index) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  const std::vector<int64_t> idx = index_values(index, p.extent, "index_select");
  Shape out = x.shape();
  out[axis] = static_cast<int64_t>(idx.size());
  Tensor y = Tensor::uninitialized(out, x.dtype());
  const size_t row = static_cast<size_t>(p.inner) * dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  for (int64_t o = 0; o < p.outer; ++o) {
    for (size_t j = 0; j < idx.size(); ++j) {
      std::memcpy(dst + (o * static_cast<int64_t>(idx.size()) + static_cast<int64_t>(j)) * row,
                  src + (o * p.extent + idx[j]) * row, row);
    }
  }
  return y;
}

Tensor index_add_cpu(const Tensor& g, int64_t axis, const Tensor& index, int64_t extent) {
  const AxisSplit p = split_at_axis(g.shape(), axis);
  const std::vector<int64_t> idx = index_values(index, extent, "index_select backward");
  Shape out = g.shape();
  out[axis] = extent;
  Tensor y = Tensor::zeros(out, g.dtype());
  dispatch_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = g.data<T>();
      T* yp = y.data<T>();
      for (int64_t o = 0; o < p.outer; ++o) {
        for (int64_t j = 0; j < p.extent; ++j) {
          const T* src = gp + (o * p.extent + j) * p.inner;
          T* dst = yp + (o * extent + idx[j]) * p.inner;
          for (int64_t i = 0; i < p.inner; ++i) dst[i] += src[i];
        }
      }
    }
  });
  return y;
}

// Calls f(out_position, source_position) for take_along over index's shape.
template <typename F>
void for_each_along(const Shape& in, const Shape& index_shape, int64_t axis, const std::vector<int64_t>& idx,
                    F f) {
  const AxisSplit pi = split_at_axis(index_shape, axis);
  const int64_t extent = in[axis];
  for (int64_t o = 0; o < pi.outer; ++o) {
    for (int64_t j = 0; j < pi.extent; ++j) {
      for (int64_t i = 0; i < pi.inner; ++i) {
        const int64_t pos = (o * pi.extent + j) * pi.inner + i;
        f(pos, (o * extent + idx[pos]) * pi.inner + i);
      }
    }
  }
}

Tensor take_along_cpu(const Tensor& x, int64_t axis, const Tensor& index) {
  const std::vector<int64_t> idx = index_values(index, x.shape()[axis], "take_along_axis");
  Tensor y = Tensor::uninitialized(index.shape(), x.dtype());
  const size_t esize = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  for_each_along(x.shape(), index.shape(), axis, idx,
                 [&](int64_t out, int64_t in) { std::memcpy(dst + out * esize, src + in * esize, esize); });
  return y;
}

Tensor take_along_backward_cpu(const Tensor& g, int64_t axis, const Tensor& index, const Shape& shape) {
  const std::vector<int64_t> idx = index_values(index, shape[axis], "take_along_axis backward");
  Tensor y = Tensor::zeros(shape, g.dtype());
  dispatch_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = g.data<T>();
      T* yp = y.data<T>();
      for_each_along(shape, index.shape(), axis, idx, [&](int64_t out, int64_t in) { yp[in] += gp[out]; });
    }
  });
  return y;
}

Tensor nd_linear_index_cpu(const Tensor& index, const Shape& dims) {
  const int64_t k = index.shape().back();
  const std::vector<int64_t> v = index.to_vector<int64_t>();
  Shape out(index.shape().begin(), index.shape().end() - 1);
  std::vector<int64_t> rows(static_cast<size_t>(shape_numel(out)));
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t pos = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t c = v[r * k + j];
      CREW_CHECK_T(IndexError, c >= -dims[j] && c < dims[j], "gather_nd: index ", c,
                   " is out of range for axis ", j, " of extent ", dims[j]);
      if (c < 0) c += dims[j];
      pos = pos * dims[j] + c;
    }
    rows[r] = pos;
  }
  return Tensor::from_vector(rows, out);
}

Tensor scatter_rows_cpu(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite) {
  const int64_t n = x.shape()[0];
  const std::vector<int64_t> idx = index_values(index, n, "scatter");
  Tensor y = x.clone();
  const int64_t row = n == 0 ? 0 : x.numel() / n;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* up = updates.data<T>();
    T* yp = y.data<T>();
    if (!overwrite) {
      for (int64_t r : idx) std::fill(yp + r * row, yp + (r + 1) * row, T(0));
    }
    for (size_t j = 0; j < idx.size(); ++j) {
      T* dst = yp + idx[j] * row;
      const T* src = up + static_cast<int64_t>(j) * row;
      for (int64_t i = 0; i < row; ++i) {
        if constexpr (std::is_same_v<T, bool>) {
          dst[i] = overwrite ? src[i] : (dst[i] || src[i]);
        } else {
          dst[i] = overwrite ? src[i] : static_cast<T>(dst[i] + src[i]);
        }
      }
    }
  });
  return y;
}

void put_cpu(const Tensor& x, const Tensor& positions, const Tensor& values) {
  const std::vector<int64_t> pos = index_values(positions, x.numel(), "put");
  const size_t esize = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(values.raw_data());
  char* dst = static_cast<char*>(x.raw_data());
  for (size_t i = 0; i < pos.size(); ++i) std::memcpy(dst + pos[i] * esize, src + i * esize, esize);
}

void check_index(const Tensor& index, const char* op) {
  CREW_CHECK(index.dtype() == DType::INT64 || index.dtype() == DType::INT32, op,
             ": index must be an int32 or int64 tensor, got ", dtype_name(index.dtype()));
}

}  // namespace

constinit KernelSlot<ExpandFn> expand_kernel("expand", &expand_cpu);
constinit KernelSlot<IndexSelectFn> index_select_kernel("index_select", &index_select_cpu);
constinit KernelSlot<IndexAddFn> index_add_kernel("index_add", &index_add_cpu);
constinit KernelSlot<TakeAlongFn> take_along_kernel("take_along", &take_along_cpu);
constinit KernelSlot<TakeAlongBackwardFn> take_along_backward_kernel("take_along_backward",
                                                                     &take_along_backward_cpu);
constinit KernelSlot<NdLinearIndexFn> nd_linear_index_kernel("nd_linear_index", &nd_linear_index_cpu);
constinit KernelSlot<ScatterRowsFn> scatter_rows_kernel("scatter_rows", &scatter_rows_cpu);
constinit KernelSlot<PutFn> put_kernel("put", &put_cpu);

Tensor expand(const Tensor& x, const Shape& shape) {
  CREW_CHECK(x.dim() <= static_cast<int64_t>(shape.size()), "expand: cannot expand shape ",
             shape_str(x.shape()), " to ", shape_str(shape), " (fewer axes)");
  for (size_t k = 0; k < x.shape().size(); ++k) {
    const int64_t a = x.shape()[x.shape().size() - 1 - k], b = shape[shape.size() - 1 - k];
    CREW_CHECK(a == b || a == 1, "expand: cannot expand shape ", shape_str(x.shape()), " to ",
               shape_str(shape));
  }
  return expand_kernel.get(x.place().type)(x, shape);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  check_index(index, "index_select");
  CREW_CHECK(index.dim() == 1, "index_select: index must be 1-d, got shape ", shape_str(index.shape()));
  check_same_place("index_select", {{"x", &x}, {"index", &index}});
  return index_select_kernel.get(x.place().type)(x, axis, index);
}

Tensor index_add(const Tensor& g, int64_t axis, const Tensor& index, int64_t extent) {
  check_floating(g, "index_select backward");
  check_same_place("index_select backward", {{"grad", &g}, {"index", &index}});
  return index_add_kernel.get(g.place().type)(g, axis, index, extent);
}

Tensor take_along(const Tensor& x, int64_t axis, const Tensor& index) {
  check_index(index, "take_along_axis");
  CREW_CHECK(index.dim() == x.dim(), "take_along_axis: index ", shape_str(index.shape()), " and x ",
             shape_str(x.shape()), " differ in rank");
  for (int64_t d = 0; d < x.dim(); ++d) {
    CREW_CHECK(d == axis || index.shape()[d] == x.shape()[d], "take_along_axis: index ",
               shape_str(index.shape()), " and x ", shape_str(x.shape()), " differ outside axis ", axis);
  }
  check_same_place("take_along_axis", {{"x", &x}, {"index", &index}});
  return take_along_kernel.get(x.place().type)(x, axis, index);
}

Tensor take_along_backward(const Tensor& g, int64_t axis, const Tensor& index, const Shape& shape) {
  check_floating(g, "take_along_axis backward");
  return take_along_backward_kernel.get(g.place().type)(g, axis, index, shape);
}

Tensor nd_linear_index(const Tensor& index, const Shape& dims) {
  check_index(index, "gather_nd");
  CREW_CHECK(index.dim() >= 1 && index.shape().back() <= static_cast<int64_t>(dims.size()),
             "gather_nd: index ", shape_str(index.shape()), " has more coordinates than x ", shape_str(dims),
             " has axes");
  return nd_linear_index_kernel.get(index.place().type)(index, dims);
}

Tensor scatter_rows(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite) {
  check_index(index, "scatter");
  CREW_CHECK(x.dim() >= 1 && index.dim() == 1 && updates.dim() == x.dim() &&
                 updates.shape()[0] == index.numel() &&
                 Shape(updates.shape().begin() + 1, updates.shape().end()) ==
                     Shape(x.shape().begin() + 1, x.shape().end()),
             "scatter: x ", shape_str(x.shape()), ", index ", shape_str(index.shape()), " and updates ",
             shape_str(updates.shape()), " do not fit (updates must be [len(index), x.shape[1:]...])");
  CREW_CHECK(x.dtype() == updates.dtype(), "scatter: x is ", dtype_name(x.dtype()), ", updates ",
             dtype_name(updates.dtype()));
  check_same_place("scatter", {{"x", &x}, {"index", &index}, {"updates", &updates}});
  return scatter_rows_kernel.get(x.place().type)(x, index, updates, overwrite);
}

void put_(const Tensor& x, const Tensor& positions, const Tensor& values) {
  check_index(positions, "put");
  CREW_CHECK(values.numel() == positions.numel() && values.dtype() == x.dtype(), "put: ", positions.numel(),
             " positions and ", values.numel(), " values of ", dtype_name(values.dtype()), " for a ",
             dtype_name(x.dtype()), " tensor");
  check_same_place("put", {{"x", &x}, {"positions", &positions}, {"values", &values}});
  put_kernel.get(x.place().type)(x, positions, values);
}

}  // namespace crew::kernels
