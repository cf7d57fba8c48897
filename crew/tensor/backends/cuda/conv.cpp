// 2-d convolution on the GPU with cuDNN (NCHW, float32/float64): forward with the bias added
// by cudnnAddTensor, the data and weight passes, the bias gradient. Algorithms are chosen
// deterministic and without TF32 (CUDNN_FMA_MATH) unless CREW_CUDA_TF32=1; workspaces come
// from crew's stream-ordered allocator.
#include <cudnn.h>

#include <array>
#include <cstdlib>
#include <tuple>

#include "crew/core/check.h"
#include "crew/tensor/backends/cuda/runtime.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/tensor.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuDNN 9 marks the legacy conv API

namespace crew::cuda {
namespace {

void check_dnn(cudnnStatus_t st, const char* op, int device) {
  CREW_CHECK_T(DeviceError, st == CUDNN_STATUS_SUCCESS, op, " on gpu:", device, ": cuDNN: ", cudnnGetErrorString(st));
}

// One handle per (device, thread), on the device's compute stream.
cudnnHandle_t handle(int device) {
  thread_local std::array<cudnnHandle_t, 64> handles{};
  cudnnHandle_t& h = handles.at(static_cast<size_t>(device));
  if (h == nullptr) check_dnn(cudnnCreate(&h), "cudnnCreate", device);
  check_dnn(cudnnSetStream(h, compute_stream(device)), "cudnnSetStream", device);
  return h;
}

bool tf32() {
  const char* v = std::getenv("CREW_CUDA_TF32");
  return v != nullptr && v[0] == '1';
}

// The descriptors of one convolution.
struct Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnDataType_t type;
  int device;

  Descs(const Shape& xs, const Shape& ws, const Shape& ys, const kernels::Conv2dParams& p, DType dtype, int dev)
      : device(dev) {
    CREW_CHECK_T(DeviceError, dtype == DType::FLOAT32 || dtype == DType::FLOAT64, "conv2d has no gpu kernel for ",
                 dtype_name(dtype));
    type = dtype == DType::FLOAT32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    const char* op = "conv2d";
    check_dnn(cudnnCreateTensorDescriptor(&x), op, device);
    check_dnn(cudnnCreateTensorDescriptor(&y), op, device);
    check_dnn(cudnnCreateTensorDescriptor(&b), op, device);
    check_dnn(cudnnCreateFilterDescriptor(&w), op, device);
    check_dnn(cudnnCreateConvolutionDescriptor(&conv), op, device);
    auto i = [](int64_t v) { return static_cast<int>(v); };
    check_dnn(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, type, i(xs[0]), i(xs[1]), i(xs[2]), i(xs[3])), op, device);
    check_dnn(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, type, i(ys[0]), i(ys[1]), i(ys[2]), i(ys[3])), op, device);
    check_dnn(cudnnSetTensor4dDescriptor(b, CUDNN_TENSOR_NCHW, type, 1, i(ys[1]), 1, 1), op, device);
    check_dnn(cudnnSetFilter4dDescriptor(w, type, CUDNN_TENSOR_NCHW, i(ws[0]), i(ws[1]), i(ws[2]), i(ws[3])), op, device);
    check_dnn(cudnnSetConvolution2dDescriptor(conv, i(p.padding[0]), i(p.padding[1]), i(p.stride[0]), i(p.stride[1]),
                                              i(p.dilation[0]), i(p.dilation[1]), CUDNN_CROSS_CORRELATION, type),
              op, device);
    check_dnn(cudnnSetConvolutionGroupCount(conv, i(p.groups)), op, device);
    check_dnn(cudnnSetConvolutionMathType(conv, tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH), op, device);
  }
  ~Descs() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(b);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;
};

// The first deterministic algorithm cuDNN ranks (math mode as set on the descriptor unless
// TF32 is allowed).
template <typename Perf>
Perf pick(const Perf* perf, int n, const char* op, int device) {
  // Without TF32: an FMA-math algorithm first, else one that is not tensor-op math.
  for (int pass = tf32() ? 1 : 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].determinism != CUDNN_DETERMINISTIC) continue;
      if (pass == 0 && perf[i].mathType != CUDNN_FMA_MATH) continue;
      if (!tf32() && perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;
      return perf[i];
    }
  }
  CREW_THROW(DeviceError, op, " on gpu:", device, ": cuDNN offers no deterministic algorithm for this convolution");
}

Tensor workspace(size_t bytes, const Place& place) {
  return Tensor::uninitialized({static_cast<int64_t>(bytes == 0 ? 1 : bytes)}, DType::UINT8, place);
}

Tensor conv2d_forward_gpu(const Tensor& x, const Tensor& w, const Tensor& bias, const kernels::Conv2dParams& p,
                          std::shared_ptr<const kernels::Conv2dSaved>* saved) {
  const int device = x.place().device;
  DeviceGuard guard(device, "conv2d");
  if (saved != nullptr) *saved = nullptr;
  const Shape ys = kernels::conv2d_output_shape(x.shape(), w.shape(), p);
  Tensor y = Tensor::uninitialized(ys, x.dtype(), x.place());
  if (y.numel() == 0) return y;
  Descs d(x.shape(), w.shape(), ys, p, x.dtype(), device);
  cudnnHandle_t h = handle(device);
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int n = 0;
  check_dnn(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf),
            "conv2d", device);
  const auto algo = pick(perf, n, "conv2d", device);
  check_dnn(cudnnSetConvolutionMathType(d.conv, algo.mathType), "conv2d", device);
  Tensor ws = workspace(algo.memory, x.place());
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool f32 = x.dtype() == DType::FLOAT32;
  const void* one = f32 ? static_cast<const void*>(&one_f) : &one_d;
  const void* zero = f32 ? static_cast<const void*>(&zero_f) : &zero_d;
  check_dnn(cudnnConvolutionForward(h, one, d.x, x.device_data(), d.w, w.device_data(), d.conv, algo.algo,
                                    ws.device_data(), algo.memory, zero, d.y, y.device_data()),
            "conv2d", device);
  if (bias.defined()) check_dnn(cudnnAddTensor(h, one, d.b, bias.device_data(), one, d.y, y.device_data()), "conv2d bias", device);
  return y;
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward_gpu(const Tensor& gy, const Tensor& x, const Tensor& w,
                                                       const Shape& x_shape, const kernels::Conv2dParams& p,
                                                       kernels::Conv2dNeeds needs,
                                                       const std::shared_ptr<const kernels::Conv2dSaved>&,
                                                       const Tensor& into_weight, const Tensor& into_bias) {
  const int device = gy.place().device;
  DeviceGuard guard(device, "conv2d backward");
  const Shape w_shape = w.defined() ? w.shape() : into_weight.shape();
  Descs d(x_shape, w_shape, gy.shape(), p, gy.dtype(), device);
  cudnnHandle_t h = handle(device);
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool f32 = gy.dtype() == DType::FLOAT32;
  const void* one = f32 ? static_cast<const void*>(&one_f) : &one_d;
  const void* zero = f32 ? static_cast<const void*>(&zero_f) : &zero_d;
  Tensor gx, gw, gb;
  if (needs.data) {
    gx = Tensor::uninitialized(x_shape, gy.dtype(), gy.place());
    if (gx.numel() > 0) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      int n = 0;
      check_dnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x,
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf),
                "conv2d backward data", device);
      const auto algo = pick(perf, n, "conv2d backward data", device);
      check_dnn(cudnnSetConvolutionMathType(d.conv, algo.mathType), "conv2d backward data", device);
      Tensor ws = workspace(algo.memory, gy.place());
      check_dnn(cudnnConvolutionBackwardData(h, one, d.w, w.device_data(), d.y, gy.device_data(), d.conv, algo.algo,
                                             ws.device_data(), algo.memory, zero, d.x, gx.device_data()),
                "conv2d backward data", device);
    }
  }
  if (needs.weights) {
    gw = into_weight.defined() ? into_weight : Tensor::uninitialized(w_shape, gy.dtype(), gy.place());
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    check_dnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w,
                                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf),
              "conv2d backward weights", device);
    const auto algo = pick(perf, n, "conv2d backward weights", device);
    check_dnn(cudnnSetConvolutionMathType(d.conv, algo.mathType), "conv2d backward weights", device);
    Tensor ws = workspace(algo.memory, gy.place());
    check_dnn(cudnnConvolutionBackwardFilter(h, one, d.x, x.device_data(), d.y, gy.device_data(), d.conv, algo.algo,
                                             ws.device_data(), algo.memory, zero, d.w, gw.device_data()),
              "conv2d backward weights", device);
    if (needs.bias) {
      gb = into_weight.defined() ? into_bias : Tensor::uninitialized({w_shape[0]}, gy.dtype(), gy.place());
      if (gb.defined())
        check_dnn(cudnnConvolutionBackwardBias(h, one, d.y, gy.device_data(), zero, d.b, gb.device_data()),
                  "conv2d backward bias", device);
    }
  }
  return {gx, gw, gb};
}

}  // namespace

void register_conv_kernels() {
  kernels::conv2d_forward_kernel.set(DeviceType::GPU, &conv2d_forward_gpu);
  kernels::conv2d_backward_kernel.set(DeviceType::GPU, &conv2d_backward_gpu);
}

}  // namespace crew::cuda
