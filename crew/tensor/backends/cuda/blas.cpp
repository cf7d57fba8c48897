// matmul and linear on the GPU with cuBLASLt, loaded with dlopen at the first GPU matmul:
// linking cuBLAS(Lt) costs every crew process 0.5-0.8 s and 217 MB at start (docs/devices.md).
// Row-major products run as their column-major transposes (C^T = B^T A^T). float32 computes
// in float32 (no TF32) unless CREW_CUDA_TF32=1.
#include <cublasLt.h>
#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/backends/cuda/runtime.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/linear.h"
#include "crew/tensor/tensor.h"

namespace crew::cuda {

void add_bias_rows(const Tensor& y, const Tensor& bias, int64_t rows, int64_t cols);  // ops.cpp

namespace {

// The cuBLASLt functions crew calls, resolved from the library once.
struct Lt {
#define CREW_LT_FN(name) decltype(&::name) name = nullptr
  CREW_LT_FN(cublasLtCreate);
  CREW_LT_FN(cublasLtMatmulDescCreate);
  CREW_LT_FN(cublasLtMatmulDescDestroy);
  CREW_LT_FN(cublasLtMatmulDescSetAttribute);
  CREW_LT_FN(cublasLtMatrixLayoutCreate);
  CREW_LT_FN(cublasLtMatrixLayoutDestroy);
  CREW_LT_FN(cublasLtMatrixLayoutSetAttribute);
  CREW_LT_FN(cublasLtMatmulPreferenceCreate);
  CREW_LT_FN(cublasLtMatmulPreferenceDestroy);
  CREW_LT_FN(cublasLtMatmulPreferenceSetAttribute);
  CREW_LT_FN(cublasLtMatmulAlgoGetHeuristic);
  CREW_LT_FN(cublasLtMatmul);
#undef CREW_LT_FN
};

const Lt& lt(int device) {
  static Lt fns;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* names[] = {"libcublasLt.so.13", "libcublasLt.so"};
    void* h = nullptr;
    for (const char* n : names)
      if ((h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (h == nullptr) {
      const char* e = dlerror();
      error = std::string("cannot load libcublasLt.so.13: ") + (e ? e : "unknown error");
      return;
    }
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (fn == nullptr && error.empty()) error = std::string("libcublasLt has no ") + name;
    };
#define CREW_LT_LOAD(name) load(fns.name, #name)
    CREW_LT_LOAD(cublasLtCreate);
    CREW_LT_LOAD(cublasLtMatmulDescCreate);
    CREW_LT_LOAD(cublasLtMatmulDescDestroy);
    CREW_LT_LOAD(cublasLtMatmulDescSetAttribute);
    CREW_LT_LOAD(cublasLtMatrixLayoutCreate);
    CREW_LT_LOAD(cublasLtMatrixLayoutDestroy);
    CREW_LT_LOAD(cublasLtMatrixLayoutSetAttribute);
    CREW_LT_LOAD(cublasLtMatmulPreferenceCreate);
    CREW_LT_LOAD(cublasLtMatmulPreferenceDestroy);
    CREW_LT_LOAD(cublasLtMatmulPreferenceSetAttribute);
    CREW_LT_LOAD(cublasLtMatmulAlgoGetHeuristic);
    CREW_LT_LOAD(cublasLtMatmul);
#undef CREW_LT_LOAD
  });
  CREW_CHECK_T(DeviceError, error.empty(), "matmul on gpu:", device, ": ", error);
  return fns;
}

void check_lt(cublasStatus_t st, const char* what, int device) {
  CREW_CHECK_T(DeviceError, st == CUBLAS_STATUS_SUCCESS, "matmul on gpu:", device, ": ", what, " failed: cublasStatus ",
               static_cast<int>(st));
}

constexpr size_t kWorkspace = 32u << 20;

struct PerDevice {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

PerDevice& per_device(int device) {
  static std::mutex mu;
  static std::array<PerDevice, 64> all{};
  std::lock_guard<std::mutex> lock(mu);
  PerDevice& d = all.at(static_cast<size_t>(device));
  if (d.handle == nullptr) {
    check_lt(lt(device).cublasLtCreate(&d.handle), "cublasLtCreate", device);
    CREW_CUDA_CHECK(cudaMalloc(&d.workspace, kWorkspace), "matmul workspace", device);
  }
  return d;
}

// The largest power of two (at most 256) dividing the address and the batch stride in bytes.
uint32_t alignment(const void* p, int64_t stride_bytes) {
  uint32_t a = 256;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  while (a > 1 && ((addr % a) != 0 || (stride_bytes % a) != 0)) a /= 2;
  return a;
}

// Row-major C[M, N] (ldc) = op(A)[M, K] op(B)[K, N], `batch` products at the given element
// strides (0: the same matrix for every product).
void gemm_rows(int device, DType dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, void* c, int64_t ldc,
               int64_t stride_c, int64_t batch) {
  const Lt& f = lt(device);
  PerDevice& pd = per_device(device);
  const bool f64 = dtype == DType::FLOAT64;
  const cudaDataType_t type = f64 ? CUDA_R_64F : CUDA_R_32F;
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (!f64 && std::getenv("CREW_CUDA_TF32") != nullptr && std::getenv("CREW_CUDA_TF32")[0] == '1')
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  cublasLtMatmulDesc_t desc = nullptr;
  check_lt(f.cublasLtMatmulDescCreate(&desc, compute, type), "cublasLtMatmulDescCreate", device);
  // Column-major: C^T [N, M] = op(B)^T [N, K] op(A)^T [K, M]; Lt's A is crew's B.
  const cublasOperation_t op_a = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  f.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a));
  f.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  // stored column-major shapes: B as [N, K] (or [K, N] when tb), A as [K, M] (or [M, K]).
  check_lt(f.cublasLtMatrixLayoutCreate(&la, type, tb ? k : n, tb ? n : k, ldb), "layout", device);
  check_lt(f.cublasLtMatrixLayoutCreate(&lb, type, ta ? m : k, ta ? k : m, lda), "layout", device);
  check_lt(f.cublasLtMatrixLayoutCreate(&lc, type, n, m, ldc), "layout", device);
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    for (auto [l, stride] : {std::pair{la, stride_b}, std::pair{lb, stride_a}, std::pair{lc, stride_c}}) {
      f.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      f.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(f.cublasLtMatmulPreferenceCreate(&pref), "preference", device);
  const uint64_t ws = kWorkspace;
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  // The heuristic assumes 256-byte aligned operands unless told: views and batch members may
  // be less aligned (as PyTorch does, tell it each operand's alignment).
  const size_t es = f64 ? 8 : 4;
  const uint32_t align_lt_a = alignment(b, stride_b * es), align_lt_b = alignment(a, stride_a * es),
                 align_c = alignment(c, stride_c * es);
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_lt_a,
                                         sizeof(align_lt_a));
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_lt_b,
                                         sizeof(align_lt_b));
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof(align_c));
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof(align_c));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t hs = f.cublasLtMatmulAlgoGetHeuristic(pd.handle, desc, la, lb, lc, lc, pref, 1, &result, &found);
  cublasStatus_t st = hs;
  if (hs == CUBLAS_STATUS_SUCCESS && found > 0) {
    const double one = 1.0, zero = 0.0;
    const float onef = 1.0f, zerof = 0.0f;
    const void* alpha = f64 ? static_cast<const void*>(&one) : static_cast<const void*>(&onef);
    const void* beta = f64 ? static_cast<const void*>(&zero) : static_cast<const void*>(&zerof);
    st = f.cublasLtMatmul(pd.handle, desc, alpha, b, la, a, lb, beta, c, lc, c, lc, &result.algo, pd.workspace,
                          kWorkspace, compute_stream(device));
  }
  f.cublasLtMatmulPreferenceDestroy(pref);
  f.cublasLtMatrixLayoutDestroy(la);
  f.cublasLtMatrixLayoutDestroy(lb);
  f.cublasLtMatrixLayoutDestroy(lc);
  f.cublasLtMatmulDescDestroy(desc);
  CREW_CHECK_T(DeviceError, found > 0 || hs != CUBLAS_STATUS_SUCCESS, "matmul on gpu:", device,
               ": cuBLASLt has no algorithm for [", m, ", ", k, "] x [", k, ", ", n, "] batch ", batch);
  check_lt(st, "cublasLtMatmul", device);
}

void check_floating(const Tensor& t, const char* op) {
  CREW_CHECK_T(DeviceError, t.dtype() == DType::FLOAT32 || t.dtype() == DType::FLOAT64, op,
               " has no gpu kernel for ", dtype_name(t.dtype()));
}

Tensor matmul_gpu(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  check_floating(a, "matmul");
  const int device = a.place().device;
  DeviceGuard guard(device, "matmul");
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const int64_t m = ta ? as[as.size() - 1] : as[as.size() - 2], k = ta ? as[as.size() - 2] : as[as.size() - 1];
  const int64_t n = tb ? bs[bs.size() - 2] : bs[bs.size() - 1];
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch_shape = kernels::broadcast_shapes(a_batch, b_batch, "matmul");
  Shape out_shape = batch_shape;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor c = Tensor::uninitialized(out_shape, a.dtype(), a.place());
  const int64_t batch = shape_numel(batch_shape), na = shape_numel(a_batch), nb = shape_numel(b_batch);
  const int64_t lda = as.back(), ldb = bs.back();
  const size_t es = dtype_size(a.dtype());
  if (batch == 0 || m == 0 || n == 0) return c;
  if (k == 0) {
    c.zero_();
    return c;
  }
  if ((na == batch || na == 1) && (nb == batch || nb == 1)) {
    gemm_rows(device, a.dtype(), ta, tb, m, n, k, a.device_data(), lda, na == 1 ? 0 : m * k, b.device_data(), ldb,
              nb == 1 ? 0 : k * n, c.device_data(), n, m * n, batch);
    return c;
  }
  // Broadcast batch axes of both: one product per output matrix.
  const size_t nd = batch_shape.size();
  for (int64_t i = 0; i < batch; ++i) {
    int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t ax = nd; ax-- > 0;) {
      const int64_t c_ax = rem % batch_shape[ax];
      rem /= batch_shape[ax];
      const int64_t da = static_cast<int64_t>(ax) - static_cast<int64_t>(nd - a_batch.size());
      const int64_t db = static_cast<int64_t>(ax) - static_cast<int64_t>(nd - b_batch.size());
      if (da >= 0) {
        const int64_t e = a_batch[static_cast<size_t>(da)];
        ia += (e == 1 ? 0 : c_ax) * sa;
        sa *= e;
      }
      if (db >= 0) {
        const int64_t e = b_batch[static_cast<size_t>(db)];
        ib += (e == 1 ? 0 : c_ax) * sb;
        sb *= e;
      }
    }
    gemm_rows(device, a.dtype(), ta, tb, m, n, k, static_cast<const char*>(a.device_data()) + ia * m * k * es, lda, 0,
              static_cast<const char*>(b.device_data()) + ib * k * n * es, ldb, 0,
              static_cast<char*>(c.device_data()) + i * m * n * es, n, 0, 1);
  }
  return c;
}

Tensor linear_forward_gpu(const Tensor& x, const Tensor& w, const Tensor& bias) {
  check_floating(x, "linear");
  const int device = x.place().device;
  DeviceGuard guard(device, "linear");
  const int64_t in = w.size(0), out = w.size(1), rows = in == 0 ? 0 : x.numel() / in;
  Shape ys = x.shape();
  ys.back() = out;
  Tensor y = Tensor::uninitialized(ys, x.dtype(), x.place());
  if (rows == 0 || out == 0) return y;
  if (in == 0) {
    y.zero_();
  } else {
    gemm_rows(device, x.dtype(), false, false, rows, out, in, x.device_data(), in, 0, w.device_data(), out, 0,
              y.device_data(), out, 0, 1);
  }
  if (bias.defined()) add_bias_rows(y, bias, rows, out);
  return y;
}

std::vector<Tensor> linear_backward_gpu(const Tensor& gy, const Tensor& x, const Tensor& w,
                                        kernels::LinearNeeds needs) {
  check_floating(gy, "linear backward");
  const int device = gy.place().device;
  DeviceGuard guard(device, "linear backward");
  const int64_t in = w.size(0), out = w.size(1), rows = out == 0 ? 0 : gy.numel() / out;
  std::vector<Tensor> grads(3);
  if (needs.x) {
    grads[0] = Tensor::uninitialized(x.shape(), gy.dtype(), gy.place());
    if (rows * in > 0) {
      if (out == 0) grads[0].zero_();
      else
        gemm_rows(device, gy.dtype(), false, true, rows, in, out, gy.device_data(), out, 0, w.device_data(), out, 0,
                  grads[0].device_data(), in, 0, 1);
    }
  }
  if (needs.weight) {
    grads[1] = Tensor::uninitialized(w.shape(), gy.dtype(), gy.place());
    if (in * out > 0) {
      if (rows == 0) grads[1].zero_();
      else
        gemm_rows(device, gy.dtype(), true, false, in, out, rows, x.device_data(), in, 0, gy.device_data(), out, 0,
                  grads[1].device_data(), out, 0, 1);
    }
  }
  if (needs.bias) grads[2] = gy.dim() == 1 ? gy.clone() : kernels::sum_to(gy, Shape{out});
  return grads;
}

}  // namespace

void register_blas_kernels() {
  kernels::matmul_kernel.set(DeviceType::GPU, &matmul_gpu);
  kernels::linear_forward_kernel.set(DeviceType::GPU, &linear_forward_gpu);
  kernels::linear_backward_kernel.set(DeviceType::GPU, &linear_backward_gpu);
}

}  // namespace crew::cuda
