#pragma once
// The part of the nccl process group that needs CUDA and NCCL, behind an interface so that
// crew_distributed compiles and starts without either: the CUDA build's crew_nccl module
// (cuda/nccl_cuda_driver.cpp: libnccl.so.2 loaded with dlopen on first use, streams and
// events from crew_cuda) installs the real driver; tests install a fake.
//
//   auto d = nccl::driver();                    // null in a build without CUDA
//   std::string id = d->unique_id();            // rank 0, shared through the store
//   auto comm = d->connect(gpu, size, rank, id);   // returns at once (non-blocking init)
//   while (comm->poll(&why) == nccl::State::PENDING) ...;   // bounded by the group's timeout
//   auto done = comm->launch({{nccl::Prim::ALL_REDUCE, p, p, n, DType::FLOAT32, ReduceOp::SUM}});
//   while (!done->ready()) ...;                 // the group's watchdog polls this
#include <memory>
#include <string>
#include <vector>

#include "crew/core/place.h"
#include "crew/distributed/process_group/collective_options.h"
#include "crew/tensor/dtype.h"

namespace crew::dist::nccl {

// NCCL's primitives; every collective of the group is a few of them in one ncclGroup.
enum class Prim { ALL_REDUCE, BROADCAST, REDUCE, SEND, RECV };

struct Call {
  Prim prim;
  const void* send = nullptr;  // device memory; nullptr for RECV
  void* recv = nullptr;        // device memory; nullptr for SEND
  size_t count = 0;            // elements
  DType dtype = DType::FLOAT32;
  ReduceOp op = ReduceOp::SUM;  // ALL_REDUCE, REDUCE
  int peer = 0;                 // root (BROADCAST, REDUCE) or peer (SEND, RECV)
};

enum class State { READY, PENDING, FAILED };

// One launched group of calls: ordered on the communicator's stream after the work already
// on the caller's compute stream, which in turn waits for it.
class Launched {
 public:
  virtual ~Launched() = default;
  // Whether the device has finished the calls (never blocks).
  virtual bool ready() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  // Non-blocking init's progress, and later any asynchronous error (ncclCommGetAsyncError);
  // on FAILED *error says why.
  virtual State poll(std::string* error) = 0;
  // Enqueues `calls` as one group; throws CommError when NCCL refuses them.
  virtual std::unique_ptr<Launched> launch(const std::vector<Call>& calls) = 0;
  // ncclCommAbort: ends every pending call; the communicator is unusable after.
  virtual void abort() = 0;
};

class Driver {
 public:
  virtual ~Driver() = default;
  // The device type whose tensors the communicators read (GPU; FAKE in tests).
  virtual DeviceType device_type() const { return DeviceType::GPU; }
  // GPUs usable by this process (0 without a driver or a device).
  virtual int device_count() = 0;
  // A stable identity of `device` ("GPU-<uuid>"): ranks with equal ones share a GPU.
  virtual std::string device_uuid(int device) = 0;
  // ncclGetUniqueId's bytes. Throws BackendUnavailableError when NCCL cannot be loaded.
  virtual std::string unique_id() = 0;
  // Starts a non-blocking ncclCommInitRankConfig on `device`; returns at once.
  virtual std::unique_ptr<Communicator> connect(int device, int size, int rank, const std::string& id) = 0;
};

// The installed driver (null when none: a build without CUDA).
std::shared_ptr<Driver> driver();
// Installs (or, with null, removes) the driver; returns the previous one.
std::shared_ptr<Driver> set_driver(std::shared_ptr<Driver> d);

}  // namespace crew::dist::nccl
