// kernels::matmul: op(a) x op(b) with NumPy-broadcast batch axes.
#include <dnnl.hpp>

#include "crew/core/check.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

// The extents of one product: batch axes of the output and of each input (the inputs' left-
// padded with 1s to the output's rank), the matrix sizes, and the stored trailing extents.
struct MatmulPlan {
  Shape batch, a_batch, b_batch;
  int64_t m = 0, n = 0, k = 0;
  int64_t ar = 0, ac = 0, br = 0, bc = 0;
  int64_t batch_count() const { return shape_numel(batch); }
};

Shape padded_batch(const Tensor& t, size_t rank) {
  Shape s(rank - static_cast<size_t>(t.dim() - 2), 1);
  s.insert(s.end(), t.shape().begin(), t.shape().end() - 2);
  return s;
}

MatmulPlan plan_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  check_floating_or_half(a, "matmul");
  check_same_dtype("matmul", "a", a, "b", b);
  CREW_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul: expected tensors of at least 2 dims, got ",
             shape_str(a.shape()), " and ", shape_str(b.shape()));
  MatmulPlan p;
  p.ar = a.size(-2), p.ac = a.size(-1), p.br = b.size(-2), p.bc = b.size(-1);
  p.m = ta ? p.ac : p.ar, p.k = ta ? p.ar : p.ac;
  const int64_t kb = tb ? p.bc : p.br;
  p.n = tb ? p.br : p.bc;
  CREW_CHECK(p.k == kb, "matmul: inner dimensions differ: ", shape_str(a.shape()), (ta ? "^T" : ""), " x ",
             shape_str(b.shape()), (tb ? "^T" : ""));
  const size_t rank = static_cast<size_t>(std::max(a.dim(), b.dim()) - 2);
  p.a_batch = padded_batch(a, rank);
  p.b_batch = padded_batch(b, rank);
  for (size_t d = 0; d < rank; ++d) {
    CREW_CHECK(p.a_batch[d] == p.b_batch[d] || p.a_batch[d] == 1 || p.b_batch[d] == 1,
               "matmul: batch axes of ", shape_str(a.shape()), " and ", shape_str(b.shape()),
               " do not broadcast");
    p.batch.push_back(std::max(p.a_batch[d], p.b_batch[d]));
  }
  return p;
}

// Element offset of output batch `i` (row-major over `out`) in an input with batch axes `in`
// (broadcast where 1) and `mat` elements per matrix.
int64_t batch_offset(int64_t i, const Shape& out, const Shape& in, int64_t mat) {
  int64_t off = 0, stride = mat;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t idx = i % out[d];
    i /= out[d];
    if (in[d] != 1) off += idx * stride;
    stride *= in[d];
  }
  return off;
}

// One gemm per output batch (float64, and float32 batches oneDNN's matmul cannot take).
template <typename T>
void matmul_loop(const MatmulPlan& p, bool ta, bool tb, const T* ap, const T* bp, T* cp) {
  for (int64_t i = 0, count = p.batch_count(); i < count; ++i) {
    gemm(ta, tb, p.m, p.n, p.k, T(1), ap + batch_offset(i, p.batch, p.a_batch, p.ar * p.ac), p.ac,
         bp + batch_offset(i, p.batch, p.b_batch, p.br * p.bc), p.bc, T(0), cp + i * p.m * p.n, p.n);
  }
}

// A strided descriptor of an input viewed as [batch..., rows, cols] (transposed in the
// strides when `trans`), stored as [batch..., stored_rows, stored_cols].
dnnl::memory::desc operand_desc(const Shape& batch, int64_t rows, int64_t cols, int64_t stored_cols,
                                bool trans, dnnl::memory::data_type dt) {
  dnnl::memory::dims dims(batch.begin(), batch.end()), strides(batch.size());
  dims.push_back(rows);
  dims.push_back(cols);
  int64_t stride = rows * cols;
  for (size_t d = batch.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= batch[d];
  }
  strides.push_back(trans ? 1 : stored_cols);
  strides.push_back(trans ? stored_cols : 1);
  return dnnl::memory::desc(dims, dt, strides);
}

struct MatmulEntry {
  dnnl::memory::desc a_md, b_md, c_md;
  dnnl::matmul prim;
};

void matmul_dnnl(const MatmulPlan& p, bool ta, bool tb, const Tensor& a, const Tensor& b, const Tensor& c) {
  static detail::PrimitiveCache<MatmulEntry> cache;
  const dnnl::memory::data_type dt = detail::dnnl_type(a.dtype());
  const std::string key = str_cat(shape_str(p.a_batch), shape_str(p.b_batch), p.m, ',', p.n, ',', p.k, ',',
                                  ta, tb, ',', dtype_name(a.dtype()));
  auto e = cache.get(key, [&] {
    auto entry = std::make_shared<MatmulEntry>();
    entry->a_md = operand_desc(p.a_batch, p.m, p.k, p.ac, ta, dt);
    entry->b_md = operand_desc(p.b_batch, p.k, p.n, p.bc, tb, dt);
    entry->c_md = operand_desc(p.batch, p.m, p.n, p.n, false, dt);
    dnnl::matmul::desc d(entry->a_md, entry->b_md, entry->c_md);
    entry->prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, detail::cpu_engine()));
    return entry;
  });
  e->prim.execute(detail::cpu_stream(), {{DNNL_ARG_SRC, detail::as_memory(a, e->a_md)},
                                         {DNNL_ARG_WEIGHTS, detail::as_memory(b, e->b_md)},
                                         {DNNL_ARG_DST, detail::as_memory(c, e->c_md)}});
}

struct LinearEntry {
  dnnl::memory::desc x_md, w_md, b_md, y_md;
  dnnl::matmul prim;
};

}  // namespace

void linear_dnnl(int64_t m, int64_t k, int64_t n, const void* x, const void* w, const void* bias, void* y,
                 DType dtype) {
  static detail::PrimitiveCache<LinearEntry> cache;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::data_type dt = detail::dnnl_type(dtype);
  try {
    auto e = cache.get(str_cat("linear", m, ',', k, ',', n, ',', bias != nullptr, dtype_name(dtype)), [&] {
      auto entry = std::make_shared<LinearEntry>();
      entry->x_md = dnnl::memory::desc({m, k}, dt, tag::ab);
      entry->w_md = dnnl::memory::desc({k, n}, dt, tag::ab);
      entry->y_md = dnnl::memory::desc({m, n}, dt, tag::ab);
      if (bias != nullptr) entry->b_md = dnnl::memory::desc({1, n}, dt, tag::ab);
      dnnl::matmul::desc d(entry->x_md, entry->w_md, entry->b_md, entry->y_md);
      entry->prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, detail::cpu_engine()));
      return entry;
    });
    auto mem = [](const dnnl::memory::desc& md, const void* p) {
      return dnnl::memory(md, detail::cpu_engine(), const_cast<void*>(p));
    };
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(e->x_md, x)},
                                               {DNNL_ARG_WEIGHTS, mem(e->w_md, w)},
                                               {DNNL_ARG_DST, mem(e->y_md, y)}};
    if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, mem(e->b_md, bias));
    e->prim.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("linear", err);
  }
}

void linear_f32(int64_t m, int64_t k, int64_t n, const float* x, const float* w, const float* bias,
                float* y) {
  linear_dnnl(m, k, n, x, w, bias, y, DType::FLOAT32);
}

void matmul_views(const MatrixView& a, const MatrixView& b, const MatrixView& c, float alpha) {
  struct Entry {
    dnnl::memory::desc a, b, c;
    dnnl::matmul prim;
  };
  static detail::PrimitiveCache<Entry> cache;
  CREW_INTERNAL_ASSERT(a.dtype == b.dtype, "matmul_views: operands of different dtypes");
  auto md = [](const MatrixView& v) {
    return dnnl::memory::desc(dnnl::memory::dims(v.dims.begin(), v.dims.end()), detail::dnnl_type(v.dtype),
                              dnnl::memory::dims(v.strides.begin(), v.strides.end()));
  };
  const std::string key =
      str_cat("views", shape_str(a.dims), shape_str(a.strides), shape_str(b.dims), shape_str(b.strides),
              shape_str(c.dims), shape_str(c.strides), alpha, dtype_name(a.dtype), dtype_name(c.dtype));
  try {
    auto e = cache.get(key, [&] {
      auto entry = std::make_shared<Entry>();
      entry->a = md(a), entry->b = md(b), entry->c = md(c);
      dnnl::primitive_attr attr;
      if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
      dnnl::matmul::desc d(entry->a, entry->b, entry->c);
      entry->prim = dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, detail::cpu_engine()));
      return entry;
    });
    e->prim.execute(detail::cpu_stream(),
                    {{DNNL_ARG_SRC, dnnl::memory(e->a, detail::cpu_engine(), a.data)},
                     {DNNL_ARG_WEIGHTS, dnnl::memory(e->b, detail::cpu_engine(), b.data)},
                     {DNNL_ARG_DST, dnnl::memory(e->c, detail::cpu_engine(), c.data)}});
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("matmul", err);
  }
}

namespace {

Tensor matmul_cpu(const Tensor& a, const Tensor& b, bool ta, bool tb);

// bfloat16/float16: one oneDNN matmul (float32 accumulation) over the strided views, or the
// float32 kernel on converted operands where oneDNN has no kernel for the dtype.
Tensor matmul_low_precision(const MatmulPlan& p, const Tensor& a, const Tensor& b, bool ta, bool tb,
                            Tensor c) {
  if (!dnnl_supports(a.dtype(), "matmul") || p.batch.size() + 2 > DNNL_MAX_NDIMS) {
    return matmul_cpu(to_float32(a), to_float32(b), ta, tb).to(a.dtype());
  }
  if (p.k == 0) {
    c.fill_(0.0);
    return c;
  }
  try {
    matmul_dnnl(p, ta, tb, a, b, c);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("matmul", err);
  }
  return c;
}

Tensor matmul_cpu(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const MatmulPlan p = plan_matmul(a, b, ta, tb);
  Shape out = p.batch;
  out.push_back(p.m);
  out.push_back(p.n);
  Tensor c = Tensor::uninitialized(out, a.dtype());
  if (c.numel() == 0) return c;
  if (is_low_precision(a.dtype())) return matmul_low_precision(p, a, b, ta, tb, c);
  // b 2-d and a untransposed: a's batch rows are one [batch * M, K] matrix.
  const bool fold = b.dim() == 2 && !ta;
  const bool dnnl_batched = !fold && a.dtype() == DType::FLOAT32 && p.batch_count() > 1 && p.k > 0 &&
                            p.batch.size() + 2 <= DNNL_MAX_NDIMS;
  if (dnnl_batched) {
    try {
      matmul_dnnl(p, ta, tb, a, b, c);
    } catch (const dnnl::error& err) {
      detail::rethrow_dnnl("matmul", err);
    }
    return c;
  }
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (fold) {
        gemm(false, tb, p.batch_count() * p.m, p.n, p.k, T(1), a.data<T>(), p.ac, b.data<T>(), p.bc, T(0),
             c.data<T>(), p.n);
      } else {
        matmul_loop(p, ta, tb, a.data<T>(), b.data<T>(), c.data<T>());
      }
    }
  });
  return c;
}

}  // namespace

constinit KernelSlot<MatmulFn> matmul_kernel("matmul", &matmul_cpu);

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  plan_matmul(a, b, ta, tb);  // validates before dispatch, for every device
  check_same_place("matmul", {{"a", &a}, {"b", &b}});
  return matmul_kernel.get(a.place().type)(a, b, ta, tb);
}

}  // namespace crew::kernels
