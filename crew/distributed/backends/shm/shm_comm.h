#pragma once
// ShmComm: the synchronous engine of the shm backend (internal). It owns the mapped segment
// and runs one collective at a time plus, concurrently, one send and one recv, each kind from
// its own ShmOpQueue: on that queue's worker thread, or inline on a thread that waits for the
// op (shm_op_queue.h).
//
// A collective is a sequence of rounds. In a round every rank writes into its own staging
// buffer, bumps its step flag, and waits until every rank's step reached the same value; then
// it may read every rank's buffer. Each rank has two buffers used alternately; a buffer is
// rewritten only after every rank signalled the round after its last read (free_after_), so
// no extra "done reading" round is needed. All ranks run the same op sequence, so the step
// counts, buffer choice and chunking agree without further messages; the first round of every
// op also compares each rank's op descriptor (kind, dtype, count, root) to catch mismatches.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crew/core/timer.h"
#include "crew/distributed/backends/shm/shm_layout.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/backends/shm/shm_segment.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/store/store.h"
#include "crew/tensor/dtype.h"

namespace crew::dist::detail {

enum class ShmOpKind : int32_t {
  BARRIER = 1,
  ALL_REDUCE,
  BROADCAST,
  REDUCE,
  ALL_GATHER,
  GATHER,
  SCATTER,
  REDUCE_SCATTER,
  ALLTOALL,
  SEND,
  RECV,
  ALLOCATE
};
const char* shm_op_name(ShmOpKind kind);

// One op in flight: what error messages name, and its deadline.
struct ShmOp {
  ShmOpKind kind;
  uint64_t seq;
  Deadline deadline;
  ShmOpDesc desc;
  bool checked = false;                  // descriptors compared (first round done)
  int peer = -1;                         // send/recv: the other rank (liveness checks only it)
  int first_buffer = -1;                 // the staging buffer acquired before the first round, if any
  std::chrono::milliseconds timeout{0};  // what the deadline was set from (for messages)
};

// A buffer of allocate_shared: one region of `region_bytes` per rank, rank r's at
// base + r * stride, all mapped by every rank.
struct ShmSharedBuffer {
  ShmSegment segment;
  size_t region_bytes = 0;
  size_t stride = 0;
  uint8_t* region(int rank) const { return static_cast<uint8_t*>(segment.data()) + size_t(rank) * stride; }
};

class ShmComm {
 public:
  ShmComm(Store& store, int rank, int world, const ProcessGroupOptions& options, const ShmOptions& shm);
  ~ShmComm();
  ShmComm(const ShmComm&) = delete;
  ShmComm& operator=(const ShmComm&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  const std::string& segment_name() const { return segment_name_; }

  // Starts an op with a deadline `timeout` from now (0: the group's timeout); fails at once
  // if the group is already broken.
  ShmOp begin(ShmOpKind kind, uint64_t seq, int64_t count, DType dtype, int root = 0,
              ReduceOp op = ReduceOp::SUM, std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Collectives (shm_collectives.cpp). Pointers are contiguous tensor data; `count` is in
  // elements of `dtype` per rank.
  void barrier(ShmOp& op);
  void all_reduce(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop);
  void reduce(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop, int root);
  void broadcast(ShmOp& op, void* data, size_t bytes, int root);
  // outputs has world entries (gather: only read on root).
  void all_gather(ShmOp& op, const std::vector<void*>& outputs, const void* input, size_t bytes,
                  bool root_only, int root);
  void scatter(ShmOp& op, void* output, const std::vector<const void*>& inputs, size_t bytes, int root);
  void reduce_scatter(ShmOp& op, void* output, const std::vector<const void*>& inputs, int64_t count,
                      DType dtype, ReduceOp rop);
  void alltoall(ShmOp& op, const std::vector<void*>& outputs, const std::vector<const void*>& inputs,
                size_t bytes);

  // ---- buffers in shared memory (shm_shared_buffer.cpp) ----
  // Collective (an ALLOCATE op): rank 0 creates a segment with a region of `bytes` for every
  // rank, the others map it; returns this rank's zero-filled region, which *owner keeps
  // mapped. Null on every rank when any rank lacked the space (the caller falls back to
  // ordinary memory); CommError on every rank for other failures.
  void* allocate_shared(ShmOp& op, size_t bytes, std::shared_ptr<const void>* owner);

  // Point to point through the (src -> dst) mailbox (shm_p2p.cpp).
  void send(ShmOp& op, const void* data, size_t bytes, int dst, int64_t tag);
  void recv(ShmOp& op, void* data, size_t bytes, int src, int64_t tag);

  // "all_reduce (rank 0, seq 17, group default)".
  std::string where(const ShmOp& op) const;

 private:
  friend struct ShmCommTestPeer;
  // Creates or maps the segment with every rank through the store (shm_attach.cpp).
  void attach(Store& store, const ShmOptions& shm);
  // Rank 0 creates and initialises the segment, the others map it (shm_attach.cpp).
  void map_segment(Store& store, const std::string& prefix, const ShmOptions& shm);
  // Every rank publishes whether map_segment worked; throws on all ranks if any failed.
  void agree_on_segment(Store& store, const std::string& prefix, const std::string& vote);
  // The shared buffer holding [data, data + bytes) in this rank's region: sets op.desc.shared
  // and shared_offset and returns the buffer, or null (shm_shared_buffer.cpp).
  const ShmSharedBuffer* find_shared(ShmOp& op, const void* data, size_t bytes) const;
  // The max_bytes to pass for a new segment of `wanted` bytes (0: no limit), counting what
  // this rank has mapped already; BackendUnavailableError when it does not fit.
  size_t shared_limit(size_t wanted) const;
  // A fresh /dev/shm name: prefix, job, group, pid and a random token (shm_attach.cpp).
  std::string new_segment_name() const;
  // What every segment name of this job and group starts with: "/crew-shm-<job>-<group>-".
  std::string segment_prefix() const;
  // all_reduce in place in a shared buffer: each rank reduces its slice reading the peers'
  // regions directly and writes the result into every region; two rounds, no staging copies.
  void all_reduce_shared(ShmOp& op, const ShmSharedBuffer& buffer, int64_t count, DType dtype, ReduceOp rop);
  // Chunked reduce-scatter + all-gather; root < 0: every rank gets the result, else only root.
  void reduce_chunks(ShmOp& op, void* data, int64_t count, DType dtype, ReduceOp rop, int root);
  // Calls body(off, n, b) for each chunk [off, off + n) of `total` units, `chunk` units at a
  // time, with staging buffer b acquired for it (at least once: every op runs a round).
  template <typename Body>
  void for_each_chunk(ShmOp& op, int64_t total, int64_t chunk, const Body& body);

  // ---- rounds and buffers (shm_comm.cpp) ----
  // Signals this rank's next step and waits for every rank to reach it.
  void round(ShmOp& op);
  // Picks the next staging buffer (0 or 1) and waits until every rank is done reading it.
  int acquire_buffer(ShmOp& op);
  // Marks buffer b as read during the current round.
  void release_buffer(int b) { free_after_[b] = my_step_ + 1; }
  uint8_t* buffer(int rank, int b) const {
    return base_ + geometry_.buffers_offset() + (size_t(rank) * 2 + b) * geometry_.buffer_bytes;
  }
  size_t buffer_bytes() const { return geometry_.buffer_bytes; }
  // Waits until flag reached target: spin, yield, then futex; checks abort, liveness, deadline.
  void wait_flag(ShmOp& op, ShmFlag& flag, uint32_t target, int waiting_for);
  void check_descriptors(ShmOp& op, uint32_t first_step);
  void check_abort(const ShmOp& op) const;
  void check_liveness(ShmOp& op, const ShmFlag& flag, uint32_t target);
  // Records the error, tells every rank through the abort flag, throws E.
  template <typename E>
  [[noreturn]] void fail(ShmOp& op, const std::string& message);
  void wake_everyone();

  RankControl& control(int r) const { return controls_[r]; }
  MailboxControl& mailbox(int src, int dst) const { return mailbox_controls_[size_t(src) * world_ + dst]; }
  uint8_t* mailbox_data(int src, int dst) const {
    return base_ + geometry_.mailboxes_offset() + (size_t(src) * world_ + dst) * geometry_.mailbox_bytes;
  }

  int rank_;
  int world_;
  std::string group_;
  std::chrono::milliseconds timeout_;
  std::chrono::microseconds spin_;
  std::chrono::milliseconds liveness_interval_;
  size_t small_bytes_;
  std::string shm_dir_;          // where new segments go (free-space check)
  size_t max_bytes_ = 0;         // ShmOptions::max_bytes, for every segment of this rank together
  bool oversubscribed_ = false;  // more ranks than CPUs: yield instead of pure spinning

  ShmSegment segment_;
  std::string segment_name_;
  ShmGeometry geometry_;
  uint8_t* base_ = nullptr;
  SegmentHeader* header_ = nullptr;
  RankControl* controls_ = nullptr;
  MailboxControl* mailbox_controls_ = nullptr;
  std::vector<pid_t> peer_pids_;
  std::vector<uint64_t> peer_start_times_;

  // Collective state: touched by one collective at a time, whichever thread runs it.
  uint32_t my_step_ = 0;
  uint32_t free_after_[2] = {0, 0};
  int next_buffer_ = 0;

  // Buffers of allocate_shared, by id; only the collectives' thread touches them.
  std::vector<std::shared_ptr<ShmSharedBuffer>> shared_;

  // The first error that broke the group (shared by the three op threads).
  mutable std::mutex broken_mu_;
  std::string broken_;
  std::atomic<bool> is_broken_{false};
};

}  // namespace crew::dist::detail
