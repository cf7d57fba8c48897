#include "crew/distributed/backends/shm/shm_comm.h"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/backends/shm/shm_sync.h"

namespace crew::dist::detail {

const char* shm_op_name(ShmOpKind kind) {
  switch (kind) {
    case ShmOpKind::BARRIER:
      return "barrier";
    case ShmOpKind::ALL_REDUCE:
      return "all_reduce";
    case ShmOpKind::BROADCAST:
      return "broadcast";
    case ShmOpKind::REDUCE:
      return "reduce";
    case ShmOpKind::ALL_GATHER:
      return "all_gather";
    case ShmOpKind::GATHER:
      return "gather";
    case ShmOpKind::SCATTER:
      return "scatter";
    case ShmOpKind::REDUCE_SCATTER:
      return "reduce_scatter";
    case ShmOpKind::ALLTOALL:
      return "alltoall";
    case ShmOpKind::SEND:
      return "send";
    case ShmOpKind::RECV:
      return "recv";
    case ShmOpKind::ALLOCATE:
      return "allocate_buffer";
  }
  return "?";
}

namespace {

// "all_reduce of 8 float32 elements (op SUM)", "broadcast of 8 int64 elements from root 1".
std::string describe(const ShmOpDesc& d) {
  const auto kind = static_cast<ShmOpKind>(d.kind);
  if (kind == ShmOpKind::BARRIER) return "barrier";
  std::string s =
      str_cat(shm_op_name(kind), " of ", d.count, " ", dtype_name(static_cast<DType>(d.dtype)), " elements");
  if (kind == ShmOpKind::BROADCAST || kind == ShmOpKind::REDUCE || kind == ShmOpKind::GATHER ||
      kind == ShmOpKind::SCATTER) {
    s += str_cat(" with root ", d.root);
  }
  if (kind == ShmOpKind::ALL_REDUCE || kind == ShmOpKind::REDUCE || kind == ShmOpKind::REDUCE_SCATTER) {
    s += str_cat(" (op ", reduce_op_name(static_cast<ReduceOp>(d.reduce_op)), ")");
  }
  if (d.shared >= 0) s += str_cat(" in shared buffer ", d.shared, " at byte ", d.shared_offset);
  return s;
}

}  // namespace

std::string ShmComm::where(const ShmOp& op) const {
  return str_cat(shm_op_name(op.kind), " (rank ", rank_, ", seq ", op.seq, ", group ", group_, ")");
}

ShmOp ShmComm::begin(ShmOpKind kind, uint64_t seq, int64_t count, DType dtype, int root, ReduceOp rop,
                     std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = timeout_;
  ShmOp op{kind, seq, Deadline(timeout), ShmOpDesc{}};
  op.timeout = timeout;
  op.desc.seq = seq;
  op.desc.kind = static_cast<int32_t>(kind);
  op.desc.count = count;
  op.desc.dtype = static_cast<int32_t>(dtype);
  op.desc.root = root;
  op.desc.reduce_op = static_cast<int32_t>(rop);
  if (is_broken_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(broken_mu_);
    CREW_THROW(CommError, where(op), ": the group is unusable after an earlier failure: ", broken_);
  }
  check_abort(op);
  return op;
}

int ShmComm::acquire_buffer(ShmOp& op) {
  const int b = next_buffer_;
  next_buffer_ ^= 1;
  if (!op.checked && op.first_buffer < 0) op.first_buffer = b;
  for (int r = 0; r < world_; ++r) {
    if (r != rank_) wait_flag(op, control(r).step, free_after_[b], r);
  }
  return b;
}

void ShmComm::round(ShmOp& op) {
  if (!op.checked) {
    // Published before the step flag, read by peers after it: see the parity argument in
    // check_descriptors.
    control(rank_).desc[my_step_ & 1] = op.desc;
  }
  const uint32_t first_step = my_step_;
  ++my_step_;
  publish(control(rank_).step, my_step_);
  for (int r = 0; r < world_; ++r) {
    if (r != rank_) wait_flag(op, control(r).step, my_step_, r);
  }
  if (!op.checked) {
    op.checked = true;
    check_descriptors(op, first_step);
  }
}

void ShmComm::check_descriptors(ShmOp& op, uint32_t first_step) {
  // Rank r wrote desc[first_step & 1] before signalling first_step + 1 and cannot rewrite that
  // slot before signalling first_step + 3, which needs this rank's first_step + 2.
  const ShmOpDesc& mine = op.desc;
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    const ShmOpDesc& theirs = control(r).desc[first_step & 1];
    const bool rooted = op.kind == ShmOpKind::BROADCAST || op.kind == ShmOpKind::REDUCE ||
                        op.kind == ShmOpKind::GATHER || op.kind == ShmOpKind::SCATTER;
    const bool reducing = op.kind == ShmOpKind::ALL_REDUCE || op.kind == ShmOpKind::REDUCE ||
                          op.kind == ShmOpKind::REDUCE_SCATTER;
    bool same = theirs.kind == mine.kind && theirs.count == mine.count && theirs.dtype == mine.dtype &&
                (!rooted || theirs.root == mine.root) && (!reducing || theirs.reduce_op == mine.reduce_op) &&
                theirs.shared == mine.shared && theirs.shared_offset == mine.shared_offset;
    if (op.kind == ShmOpKind::BARRIER) same = theirs.kind == mine.kind;
    if (!same) {
      // Every rank sees the mismatch at this same round. Undo this op's buffer choice so that
      // the ranks' buffer alternation stays in step (nobody read what was written).
      if (op.first_buffer >= 0) next_buffer_ = op.first_buffer;
      CREW_THROW(CommError, where(op), ": rank ", r, " issued ", describe(theirs), " (its seq ", theirs.seq,
                 ") but this rank issued ", describe(mine),
                 " (every rank must issue the same collectives in the same order)");
    }
  }
}

void ShmComm::wait_flag(ShmOp& op, ShmFlag& flag, uint32_t target, int waiting_for) {
  if (reached(flag.value.load(std::memory_order_acquire), target)) return;
  const auto spin_until = Clock::now() + spin_;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (reached(flag.value.load(std::memory_order_acquire), target)) return;
      cpu_relax();
    }
    check_abort(op);
    if (Clock::now() >= spin_until) break;
    if (oversubscribed_) sched_yield();
  }
  auto next_liveness = Clock::now();
  for (;;) {
    flag.waiters.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = flag.value.load(std::memory_order_seq_cst);
    if (!reached(seen, target)) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(op.deadline.remaining());
      futex_wait(
          &flag.value, seen,
          std::min<std::chrono::microseconds>(left + std::chrono::microseconds(100), liveness_interval_));
    }
    flag.waiters.fetch_sub(1, std::memory_order_seq_cst);
    const uint32_t now_value = flag.value.load(std::memory_order_acquire);
    if (reached(now_value, target)) return;
    check_abort(op);
    if (Clock::now() >= next_liveness) {
      check_liveness(op, flag, target);
      next_liveness = Clock::now() + liveness_interval_;
    }
    if (op.deadline.expired()) {
      fail<TimeoutError>(op, str_cat("timed out after ", op.timeout.count(), " ms waiting for rank ",
                                     waiting_for, " (its flag is at ", now_value, ", this op needs ", target,
                                     "; is it stuck or running a different collective?)"));
    }
  }
}

void ShmComm::check_abort(const ShmOp& op) const {
  const uint32_t who = header_->abort.value.load(std::memory_order_acquire);
  if (who == 0) return;
  std::string message(header_->abort_message, strnlen(header_->abort_message, kShmErrorChars));
  auto* self = const_cast<ShmComm*>(this);
  {
    std::lock_guard<std::mutex> lock(broken_mu_);
    if (self->broken_.empty()) self->broken_ = str_cat("rank ", who - 1, " aborted the group: ", message);
  }
  self->is_broken_.store(true, std::memory_order_release);
  CREW_THROW(CommError, where(op), ": rank ", who - 1, " aborted the group: ", message);
}

void ShmComm::check_liveness(ShmOp& op, const ShmFlag& flag, uint32_t target) {
  for (int r = 0; r < world_; ++r) {
    if (r == rank_ || (op.peer >= 0 && r != op.peer)) continue;
    const pid_t pid = control(r).pid.load(std::memory_order_acquire);
    std::string gone;
    if (pid < 0) {
      gone = str_cat("rank ", r, " (pid ", -pid, ") left the group (destroyed its process group)");
    } else {
      const Liveness state = process_liveness(pid, control(r).start_time.load(std::memory_order_relaxed));
      if (state != Liveness::ALIVE) gone = str_cat("rank ", r, " (pid ", pid, ") ", liveness_name(state));
    }
    if (gone.empty()) continue;
    // A peer that finished this op may publish the flag and exit between the caller's last read
    // and this check: what it published before going is visible now, so read the flag again.
    if (reached(flag.value.load(std::memory_order_acquire), target)) return;
    fail<CommError>(op, gone);
  }
}

template <typename E>
void ShmComm::fail(ShmOp& op, const std::string& message) {
  const std::string full = str_cat(where(op), ": ", message);
  {
    std::lock_guard<std::mutex> lock(broken_mu_);
    if (broken_.empty()) broken_ = full;
  }
  is_broken_.store(true, std::memory_order_release);
  int32_t expected = 0;
  if (header_->abort_claim.compare_exchange_strong(expected, 1)) {
    std::strncpy(header_->abort_message, full.c_str(), kShmErrorChars - 1);
    publish(header_->abort, static_cast<uint32_t>(rank_ + 1));
    wake_everyone();
  }
  throw E(full);
}

template void ShmComm::fail<CommError>(ShmOp&, const std::string&);
template void ShmComm::fail<TimeoutError>(ShmOp&, const std::string&);

void ShmComm::wake_everyone() {
  for (int r = 0; r < world_; ++r) futex_wake_all(&control(r).step.value);
  for (int i = 0; i < world_ * world_; ++i) {
    futex_wake_all(&mailbox_controls_[i].sent.value);
    futex_wake_all(&mailbox_controls_[i].acked.value);
  }
}

}  // namespace crew::dist::detail
