#pragma once
// The per-call options of the ProcessGroup collectives, one struct per collective (as c10d's
// AllreduceOptions). Every struct ends with the two fields all collectives share:
//   timeout   bounds this op; 0 (the default) = the group's ProcessGroupOptions::timeout.
//   async_op  true (default): the op progresses on the backend's thread while the caller
//             goes on; false: the caller will wait() at once, so the backend may leave the
//             op to that wait (process_group.h states the whole Work contract).
//
//   pg.all_reduce(t, {.op = ReduceOp::AVG});
//   pg.reduce(t, {.root = 0, .op = ReduceOp::MAX, .async_op = false})->wait();
//   pg.send(t, /*dst=*/1, {.tag = 7});
#include <chrono>

namespace crew::dist {

enum class ReduceOp { SUM, MAX, MIN, PROD, AVG };
const char* reduce_op_name(ReduceOp op);

// The timeout value that means "the group's timeout".
inline constexpr std::chrono::milliseconds kGroupTimeout{0};

struct AllReduceOptions {
  ReduceOp op = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct BroadcastOptions {
  int root = 0;  // group rank whose tensor every rank receives
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct ReduceOptions {
  int root = 0;  // group rank that receives the reduction
  ReduceOp op = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct AllGatherOptions {
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct GatherOptions {
  int root = 0;  // group rank that receives every rank's input
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct ScatterOptions {
  int root = 0;  // group rank whose inputs are scattered
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct ReduceScatterOptions {
  ReduceOp op = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct AllToAllOptions {
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

// send/recv: a message matches the next one of the pair with the same tag (>= 0).
struct SendOptions {
  int tag = 0;
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct RecvOptions {
  int tag = 0;
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

struct BarrierOptions {
  std::chrono::milliseconds timeout = kGroupTimeout;
  bool async_op = true;
};

}  // namespace crew::dist
