// The real nccl driver (nccl_driver.h) of crew's CUDA build (module crew_nccl): libnccl.so.2
// is loaded with dlopen the first time a group needs it, so that every crew program starts
// where NCCL (or a GPU) is missing; streams and events are crew_cuda's. Each communicator has
// its own stream: a launch makes it wait for the caller's compute stream, runs the NCCL group
// there, and makes the compute stream wait for it in turn (no host block).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/nccl/nccl_driver.h"
#include "crew/tensor/backends/cuda/runtime.h"

namespace crew::dist::nccl {
namespace {

struct Api {
  std::string error;  // why NCCL could not be loaded ("" when loaded)
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*ncclCommInitRankConfig)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) = nullptr;
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*ncclCommAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommFinalize)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
  ncclResult_t (*ncclAllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                cudaStream_t) = nullptr;
  ncclResult_t (*ncclBroadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                                cudaStream_t) = nullptr;
  ncclResult_t (*ncclReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*ncclSend)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*ncclRecv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
  const char* (*ncclGetLastError)(ncclComm_t) = nullptr;
};

const Api& api() {
  static const Api a = [] {
    Api a;
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      a.error = std::string("cannot load libnccl.so.2: ") + (e ? e : "unknown error");
      return a;
    }
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (fn == nullptr && a.error.empty()) a.error = std::string("libnccl.so.2 has no ") + name;
    };
#define CREW_NCCL_LOAD(name) load(a.name, #name)
    CREW_NCCL_LOAD(ncclGetUniqueId);
    CREW_NCCL_LOAD(ncclCommInitRankConfig);
    CREW_NCCL_LOAD(ncclCommGetAsyncError);
    CREW_NCCL_LOAD(ncclCommAbort);
    CREW_NCCL_LOAD(ncclCommFinalize);
    CREW_NCCL_LOAD(ncclCommDestroy);
    CREW_NCCL_LOAD(ncclGroupStart);
    CREW_NCCL_LOAD(ncclGroupEnd);
    CREW_NCCL_LOAD(ncclAllReduce);
    CREW_NCCL_LOAD(ncclBroadcast);
    CREW_NCCL_LOAD(ncclReduce);
    CREW_NCCL_LOAD(ncclSend);
    CREW_NCCL_LOAD(ncclRecv);
    CREW_NCCL_LOAD(ncclGetErrorString);
    CREW_NCCL_LOAD(ncclGetLastError);
#undef CREW_NCCL_LOAD
    return a;
  }();
  return a;
}

const Api& loaded(const char* op) {
  const Api& a = api();
  if (!a.error.empty()) CREW_THROW(dist::BackendUnavailableError, op, ": ", a.error);
  return a;
}

std::string describe(const Api& a, ncclResult_t r, ncclComm_t comm) {
  std::string s = a.ncclGetErrorString(r);
  const char* last = comm ? a.ncclGetLastError(comm) : nullptr;
  if (last && *last) s += std::string(": ") + last;
  return s;
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::FLOAT32:
      return ncclFloat32;
    case DType::FLOAT64:
      return ncclFloat64;
    case DType::INT32:
      return ncclInt32;
    case DType::INT64:
      return ncclInt64;
    case DType::UINT8:
    case DType::BOOL:
      return ncclUint8;
    case DType::BFLOAT16:
      return ncclBfloat16;
    case DType::FLOAT16:
      return ncclFloat16;
  }
  CREW_THROW(DTypeError, "nccl: no NCCL type for dtype ", static_cast<int>(t));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return ncclSum;
    case ReduceOp::MAX:
      return ncclMax;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::PROD:
      return ncclProd;
    case ReduceOp::AVG:
      return ncclAvg;
  }
  return ncclSum;
}

class CudaLaunched : public Launched {
 public:
  CudaLaunched(int device, cudaEvent_t done) : device_(device), done_(done) {}
  ~CudaLaunched() override { cudaEventDestroy(done_); }
  bool ready() override {
    const cudaError_t e = cudaEventQuery(done_);
    if (e == cudaErrorNotReady) return false;
    if (e != cudaSuccess) cuda::throw_cuda_error(e, "nccl collective", device_);
    return true;
  }

 private:
  int device_;
  cudaEvent_t done_;
};

class CudaCommunicator : public Communicator {
 public:
  CudaCommunicator(int device, int size, int rank, const std::string& id) : device_(device) {
    const Api& a = loaded("nccl init");
    cuda::DeviceGuard guard(device, "nccl init");
    CREW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "nccl init", device);
    ncclUniqueId uid;
    CREW_CHECK(id.size() == sizeof(uid.internal), "nccl init: the unique id has ", id.size(),
               " bytes, expected ", sizeof(uid.internal));
    std::memcpy(uid.internal, id.data(), sizeof(uid.internal));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // returns at once; poll() follows it, bounded by the group's timeout
    const ncclResult_t r = a.ncclCommInitRankConfig(&comm_, size, uid, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      CREW_THROW(CommError, "nccl init on gpu:", device,
                 ": ncclCommInitRankConfig: ", describe(a, r, nullptr));
    }
  }

  ~CudaCommunicator() override {
    const Api& a = api();
    if (comm_ != nullptr && !aborted_) {
      // Finalize flushes what is in flight; a communicator that does not finish is aborted.
      ncclResult_t state = a.ncclCommFinalize(comm_);
      for (int i = 0; i < 10000 && state == ncclInProgress; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        a.ncclCommGetAsyncError(comm_, &state);
      }
      if (state == ncclSuccess)
        a.ncclCommDestroy(comm_);
      else
        a.ncclCommAbort(comm_);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  State poll(std::string* error) override {
    const Api& a = api();
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = a.ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) state = r;
    if (state == ncclSuccess) return State::READY;
    if (state == ncclInProgress) return State::PENDING;
    if (error) *error = describe(a, state, comm_);
    return State::FAILED;
  }

  std::unique_ptr<Launched> launch(const std::vector<Call>& calls) override;

  void abort() override {
    if (comm_ != nullptr && !aborted_) {
      aborted_ = true;
      api().ncclCommAbort(comm_);
    }
  }

 private:
  ncclResult_t enqueue(const Api& a, const Call& c) {
    const ncclDataType_t t = nccl_type(c.dtype);
    switch (c.prim) {
      case Prim::ALL_REDUCE:
        return a.ncclAllReduce(c.send, c.recv, c.count, t, nccl_op(c.op), comm_, stream_);
      case Prim::BROADCAST:
        return a.ncclBroadcast(c.send, c.recv, c.count, t, c.peer, comm_, stream_);
      case Prim::REDUCE:
        return a.ncclReduce(c.send, c.recv, c.count, t, nccl_op(c.op), c.peer, comm_, stream_);
      case Prim::SEND:
        return a.ncclSend(c.send, c.count, t, c.peer, comm_, stream_);
      case Prim::RECV:
        return a.ncclRecv(c.recv, c.count, t, c.peer, comm_, stream_);
    }
    return ncclInvalidArgument;
  }

  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool aborted_ = false;
};

std::unique_ptr<Launched> CudaCommunicator::launch(const std::vector<Call>& calls) {
  const Api& a = api();
  cuda::DeviceGuard guard(device_, "nccl collective");
  cudaStream_t compute = cuda::compute_stream(device_);
  cudaEvent_t before = nullptr, after = nullptr;
  CREW_CUDA_CHECK(cudaEventCreateWithFlags(&before, cudaEventDisableTiming), "nccl collective", device_);
  CREW_CUDA_CHECK(cudaEventRecord(before, compute), "nccl collective", device_);
  CREW_CUDA_CHECK(cudaStreamWaitEvent(stream_, before, 0), "nccl collective", device_);
  cudaEventDestroy(before);
  ncclResult_t r = a.ncclGroupStart();
  for (const Call& c : calls) {
    if (r != ncclSuccess && r != ncclInProgress) break;
    r = enqueue(a, c);
  }
  const ncclResult_t end = a.ncclGroupEnd();
  if (r == ncclSuccess || r == ncclInProgress) r = end;
  // A non-blocking communicator may still be enqueueing: the stream is complete once its state
  // leaves ncclInProgress (bounded: the watchdog's poll reports a failure).
  for (int i = 0; r == ncclInProgress && i < 100000; ++i) a.ncclCommGetAsyncError(comm_, &r);
  if (r != ncclSuccess) CREW_THROW(CommError, "nccl on gpu:", device_, ": ", describe(a, r, comm_));
  CREW_CUDA_CHECK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming), "nccl collective", device_);
  CREW_CUDA_CHECK(cudaEventRecord(after, stream_), "nccl collective", device_);
  CREW_CUDA_CHECK(cudaStreamWaitEvent(compute, after, 0), "nccl collective", device_);
  return std::make_unique<CudaLaunched>(device_, after);
}

class CudaDriver : public Driver {
 public:
  int device_count() override { return cuda::device_count(); }

  std::string device_uuid(int device) override {
    cudaDeviceProp prop;
    CREW_CUDA_CHECK(cudaGetDeviceProperties(&prop, device), "nccl: device uuid", device);
    std::string s = "GPU-";
    char hex[3];
    for (unsigned char b : prop.uuid.bytes) {
      std::snprintf(hex, sizeof(hex), "%02x", b);
      s += hex;
    }
    return s;
  }

  std::string unique_id() override {
    const Api& a = loaded("nccl unique id");
    ncclUniqueId id;
    const ncclResult_t r = a.ncclGetUniqueId(&id);
    if (r != ncclSuccess) CREW_THROW(CommError, "nccl: ncclGetUniqueId: ", describe(a, r, nullptr));
    return std::string(id.internal, sizeof(id.internal));
  }

  std::unique_ptr<Communicator> connect(int device, int size, int rank, const std::string& id) override {
    return std::make_unique<CudaCommunicator>(device, size, rank, id);
  }
};

// Installing the driver loads nothing: NCCL is opened when a group first needs it.
[[maybe_unused]] const bool installed = [] {
  set_driver(std::make_shared<CudaDriver>());
  return true;
}();

}  // namespace
}  // namespace crew::dist::nccl

// Referenced by the linker (-u, cmake/CrewCuda.cmake) so that the installation above is kept.
extern "C" {
int crew_nccl_driver_anchor = 0;
}
